"""Every figure of `report` and `log` equals the one computed from runs_df, checks_df and
history_df, and from DuckDB over the files `smevals export` writes: on every shipped suite
(in the working tree: the attack suite here, the others beside their golden reports in
tests/suites/test_suites.py) and at each commit of a seven-commit history (`rev=`,
`--rev`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import smevals
from tests.helpers.figures import (
    cli,
    from_history,
    from_log,
    report_json,
    same_figures,
)
from tests.helpers.history7 import SUBJECTS, history7

ROOT = Path(__file__).resolve().parents[2]
ATTACKS = "reward-hacking"


def models_of(suite: Path) -> list[str]:
    """The models a suite's recorded answers (or agent sessions) are for."""
    sessions = suite / "configs" / "sessions"
    if sessions.is_dir():
        return sorted(p.name for p in sessions.iterdir() if p.is_dir())
    lines = (suite / "configs" / "responses.jsonl").read_text().splitlines()
    return sorted({json.loads(line)["model"] for line in lines})


@pytest.mark.timeout(600)
@pytest.mark.parametrize("name", [ATTACKS])
def test_a_shipped_suite(name: str, tmp_path: Path) -> None:
    """The attack suite here, one Run per Task and model (its agent runs real tests in the
    sandbox); every other shipped suite is compared on the three Runs per Task and model
    of its golden report (tests/suites/test_suites.py), made once."""
    suite = tmp_path / name
    shutil.copytree(ROOT / "suites" / name, suite,
                    ignore=shutil.ignore_patterns("results", "__pycache__"))
    models = [arg for model in models_of(suite) for arg in ("-m", model)]
    res = cli("run", name, *models, "-g", "-j", "4", cwd=tmp_path)
    assert res.code == 1, res.both                  # the weaker model fails some Runs
    same_figures(tmp_path, [name])
    same_figures(tmp_path, [name], "-m", models[1], models=[models[1]])


@pytest.fixture(scope="module")
def repo7(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("history7") / "repo"
    root.mkdir()
    return root, history7(root)


@pytest.mark.timeout(600)
def test_each_commit_of_a_seven_commit_history(repo7, monkeypatch) -> None:
    repo, shas = repo7
    monkeypatch.chdir(repo)
    for sha, subject in zip(shas, SUBJECTS, strict=True):
        same_figures(repo, ["qa"], "--rev", sha, rev=sha)
        (ev,) = smevals.evals("qa", rev=sha)
        doc = report_json(repo, "qa", "--rev", sha)["evals"][0]
        assert (ev.commit, ev.damaged, ev.notes) == (sha, doc["damaged"], doc["notes"])
        assert bool(ev.damaged) == (subject == "a damaged run record")
        runs = smevals.runs_df("qa", rev=sha)
        assert set(runs["commit"]) == {sha}
        assert set(runs["store"]) == {f"{sha}:qa/results"}
    # the options that choose other Grades and Runs, at the newest commit
    options: list[tuple[tuple[str, ...], dict[str, Any]]] = [
        (("--include-stale",), {"include_stale": True}),
        (("--any-version",), {"any_version": True}),
        (("-c", "alt"), {"configs": ["alt"]}),
        (("-t", "alpha", "-t", "beta"), {"tasks": ["alpha", "beta"]})]
    for flags, names in options:
        same_figures(repo, ["qa"], "--rev", shas[-1], *flags, rev=shas[-1], **names)


def test_the_history_is_logs(repo7, monkeypatch) -> None:
    repo, shas = repo7
    monkeypatch.chdir(repo)
    res = cli("log", "qa", "--format", "json", cwd=repo)
    assert res.code == 0, res.both
    doc = json.loads(res.out)
    assert [c["sha"] for c in doc["commits"]] == shas[::-1]
    frame = smevals.history_df("qa")
    assert from_history(frame) == from_log(doc)
    assert smevals.log("qa")["commits"] == doc["commits"]
    assert from_history(smevals.history_df("qa", n=3)) == \
        from_log(json.loads(cli("log", "qa", "-n", "3", "--format", "json", cwd=repo).out))
    res = cli("export", "qa", "--history", "7", "-o", "out", cwd=repo)
    assert res.code == 0, res.both
    assert res.out.splitlines()[-1] == f"Wrote out/history.parquet ({len(frame)} rows)"
    import duckdb

    got = duckdb.execute("SELECT sha, model, runs, passed, pass_rate FROM "
                         "'out/history.parquet' WHERE model IS NOT NULL").fetchall()
    assert sorted(got) == sorted((r[0], r[4], r[5], r[7], r[12]) for r in from_log(doc))
