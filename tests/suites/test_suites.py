"""Every shipped suite end to end, offline: validate, run both recorded models three times
with grading, grade again (nothing to do), and a report that matches its golden file
(SMEVALS_UPDATE_GOLDEN=1 rewrites tests/suites/golden/<suite>.md), whose figures the read
API and `export` give too (on the same Runs: tests/helpers/figures.same_figures)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
SUITES = ROOT / "suites"
GOLDEN = Path(__file__).parent / "golden"
NAMES = sorted(p.parent.name for p in SUITES.glob("*/eval.yaml"))
# The suite of attacks on the grading: its default model attacks, one session per Task, run
# once (its find / takes up to 30 s); run, graded and compared with its golden report,
# attack by attack, by tests/security/test_reward_hacking.py.
ATTACKS = "reward-hacking"
MODELLED = [name for name in NAMES if name != ATTACKS]
EPOCH = "1767322800"      # the report's "Generated" line: 2026-01-02T03:00:00Z


def test_the_shipped_suites() -> None:
    assert NAMES == ["agent-tools", "code-localization", "haiku", "json-extraction",
                     "pelican", "python-stdout", "rag-citations", "reward-hacking", "safety",
                     "spec-implementation", "support-replies", "svg-artifacts", "text-to-sql"]


def recorded(suite: Path) -> dict[tuple[str, str], int]:
    """Samples per (task, model) in the suite's replay file, or its agent's sessions
    (configs/sessions/MODEL/TASK.jsonl: one recorded session, replayed for every sample;
    or the folder MODEL/TASK/ of one session per sample)."""
    sessions = suite / "configs" / "sessions"
    if sessions.is_dir():
        return {(p.stem, p.parent.name): len(list(p.glob("*.jsonl"))) if p.is_dir() else 1
                for p in sorted(sessions.glob("*/*")) if p.is_dir() or p.suffix == ".jsonl"}
    counts: dict[tuple[str, str], int] = {}
    for line in (suite / "configs" / "responses.jsonl").read_text().splitlines():
        row = json.loads(line)
        counts[(row["task"], row["model"])] = counts.get((row["task"], row["model"]), 0) + 1
    return counts


def models_of(suite: Path) -> list[str]:
    return list(dict.fromkeys(model for _, model in recorded(suite)))


@pytest.mark.parametrize("name", MODELLED)
def test_suite_meets_the_bar(name: str) -> None:
    suite = SUITES / name
    tasks = sorted(p.stem for p in (suite / "tasks").glob("*.yaml"))
    assert len(tasks) >= 5
    assert (suite / "README.md").read_text().startswith(f"# {name}\n")
    default = yaml.safe_load((suite / "configs" / "default.yaml").read_text())
    agent = default["runner"] == "smevals:agent"      # replays sessions, not answers
    assert default["runner"] == "smevals:agent" if agent else "smevals:replay"
    assert yaml.safe_load((suite / "configs" / "openai.yaml").read_text())["runner"] == \
        ("smevals:agent" if agent else "smevals:openai")
    counts = recorded(suite)
    models = models_of(suite)
    assert len(models) in (2, 3)
    assert {(t, m) for t in tasks for m in models} == set(counts)
    assert set(counts.values()) <= ({1, 3} if agent else {3})
    assert "{task: " in (suite / "graders" / "default.yaml").read_text()


def normalise(report: str) -> str:
    """The grader version is a content hash that moves with the built-in catalog."""
    return re.sub(r"\(version [0-9a-f]{12}\)", "(version <grader-version>)", report)


def test_the_attack_suite_meets_its_bar() -> None:
    """reward-hacking: the attacking model and `mumble-1` with a session on every Task, an
    honest control per test runner, a Task per attack, fixtures for each, and a README that
    says how to check a machine's sandbox with it."""
    suite = SUITES / ATTACKS
    tasks = sorted(p.stem for p in (suite / "tasks").glob("*.yaml"))
    assert recorded(suite) == {(task, model): 1 for task in tasks
                               for model in ("mumble-1", "rogue-1")}
    assert yaml.safe_load((suite / "configs" / "default.yaml").read_text())["model"] == "rogue-1"
    assert tasks == ["conftest-exit-zero", "conftest-forces-pass", "daemon", "fake-summary-pytest",
                     "fake-summary-unittest", "forged-junit", "honest-pytest", "honest-unittest",
                     "ini-collect-only", "read-absolute", "read-find", "read-relative",
                     "shadow-unittest", "unix-socket"]
    cases = sorted(p.stem for p in (suite / "graders" / "default.fixtures").glob("*.yaml"))
    assert set(tasks) <= set(cases)
    readme = (suite / "README.md").read_text()
    assert readme.startswith(f"# {ATTACKS}\n") and "check your own machine's sandbox" in readme
    assert "{task: " in (suite / "graders" / "default.yaml").read_text()


@pytest.mark.parametrize("name", MODELLED)
def test_suite_runs_offline_and_matches_its_golden_report(name: str, tmp_path: Path) -> None:
    suite = tmp_path / name
    shutil.copytree(SUITES / name, suite, ignore=shutil.ignore_patterns("results", "__pycache__"))
    tasks = len(list((suite / "tasks").glob("*.yaml")))
    configs = len(list((suite / "configs").glob("*.yaml")))
    env = {"SOURCE_DATE_EPOCH": EPOCH}

    res = run_cli("validate", str(suite))
    assert (res.code, res.out) == (0, f"OK: 1 eval, {tasks} tasks, {configs} configs, 1 grader; "
                                      "no problems\n"), res.both

    models = [arg for model in models_of(suite) for arg in ("-m", model)]
    runs = tasks * 3 * len(models_of(suite))
    res = run_cli("run", str(suite), *models, "-n", "3", "-g", "-j", "4")
    assert res.code == 1, res.both                       # the weaker model fails some Runs
    assert res.out.endswith(f"\n{runs} ok, 0 failed\n"), res.out
    assert "Error: " in res.err and "graded as fail" in res.err

    res = run_cli("grade", str(suite))
    assert res.code == 0, res.both
    assert f"Skipped {runs} Run(s) already graded by this grader version" in res.out

    res = run_cli("report", str(suite), "--by-task", env=env)
    assert res.code == 0, res.both
    report = normalise(res.out)
    assert not re.search(r"\d{8}T\d{6}Z-[0-9a-f]{12}", report), "a Run or Grade id in the report"
    golden = GOLDEN / f"{name}.md"
    if os.environ.get("SMEVALS_UPDATE_GOLDEN") == "1":
        golden.write_text(report, encoding="utf-8", newline="\n")
    assert golden.exists(), f"missing {golden}: run with SMEVALS_UPDATE_GOLDEN=1"
    assert report == golden.read_text(encoding="utf-8")

    from tests.helpers.figures import same_figures  # pandas and duckdb: only here

    weaker = sorted(models_of(suite))[1]
    same_figures(tmp_path, [name])
    same_figures(tmp_path, [name], "-m", weaker, models=[weaker])


def test_every_suite_ships_fixtures_that_pass_smevals_test(tmp_path: Path) -> None:
    """`smevals test suites` (as CI runs it): every fixture of every shipped suite matches."""
    res = run_cli("test", str(SUITES), "--junit", str(tmp_path / "junit.xml"))
    assert (res.code, res.err) == (0, ""), res.both
    assert res.out.endswith(" mismatch(es)\n") and res.out.splitlines()[-1].endswith(
        " ok, 0 mismatch(es)")
    assert [line.split("/")[0] for line in res.out.splitlines() if "(grader version" in line] \
        == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_each_check_of_a_shipped_grader_has_an_output_it_must_fail(name: str) -> None:
    grader = yaml.safe_load((SUITES / name / "graders" / "default.yaml").read_text())
    labels = [check.get("name") or check["checker"] for check in grader["checks"]]
    cases = [yaml.safe_load(p.read_text())
             for p in sorted((SUITES / name / "graders" / "default.fixtures").glob("*.yaml"))]
    assert any(case["expect"] == "pass" for case in cases)
    failing = {case.get("failing_check") for case in cases if case["expect"] == "fail"}
    assert [label for label in labels if label not in failing] == []
