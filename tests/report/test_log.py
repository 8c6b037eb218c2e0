"""`smevals log` end to end on git histories of the qa Eval: every commit's figures against
`report --rev C --format json`, the marks, each format, the range options, a Suite, a
shallow clone and the bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import make_eval
from tests.report.builder import git, history
from tests.report.conftest import smevals
from tests.report.logrepo import DAMAGED, GRADER_CHANGED, MERGED, RUNNER_CHANGED, history30

FIGURES = ("runs", "passed", "failed", "scored", "mean", "stderr", "pass_rate",
           "pass_rate_ci")


@pytest.fixture(scope="module")
def repo30(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("log30") / "repo"
    root.mkdir()
    return root, history30(root)


def log_json(repo: Path, *args: str) -> dict[str, Any]:
    res = smevals("log", *args, "--format", "json", cwd=repo)
    assert res.code == 0, res.err
    return json.loads(res.out)


def leaderboard(repo: Path, sha: str) -> dict[tuple[str, str], dict[str, Any]]:
    """`report --rev sha`'s leaderboard entries by (config, model); none without Runs."""
    res = smevals("report", "qa", "--rev", sha, "--format", "json", cwd=repo)
    if res.code == 2 and ("no Runs in" in res.err or "no store at" in res.err):
        return {}
    assert res.code == 0, res.err
    (ev,) = json.loads(res.out)["evals"]
    return {(g["config"], g["model"]): g for g in ev["leaderboard"]}


def test_every_commit_has_the_figures_report_gives_and_the_right_marks(repo30) -> None:
    repo, subjects = repo30
    doc = log_json(repo, "qa")
    listed = [c["subject"] for c in doc["commits"]]
    assert listed == git(repo, "log", "--format=%s", "--", "qa").splitlines()
    assert sorted(listed) == sorted(s for s in subjects if s != "a readme, outside the Eval")
    assert (len(subjects), doc["commits_read"], doc["shallow"]) == (30, 30, False)
    for commit in doc["commits"]:
        want = leaderboard(repo, commit["sha"])
        rows = {(r["config"], r["model"]): r for r in commit["rows"]}
        assert rows.keys() == want.keys(), commit["subject"]
        for key, row in rows.items():
            if row["damage"]:
                assert (row["runs"], row["mean"], row["pass_rate"]) == (want[key]["runs"],
                                                                       None, None)
                continue
            assert {f: row[f] for f in FIGURES} == {f: want[key][f] for f in FIGURES}
            assert row["grader_version"] == commit_version(repo, commit["sha"])
    marked = {mark: sorted({c["subject"] for c in doc["commits"] for r in c["rows"]
                            if mark in r["marks"]}) for mark in ("grader", "runner")}
    assert marked == {"grader": list(GRADER_CHANGED), "runner": list(RUNNER_CHANGED)}
    commits = {c["subject"]: c for c in doc["commits"]}
    deleted = commits["task gamma deleted"]["rows"]
    assert {(r["model"], tuple(r["marks"]), tuple(r["changes"])) for r in deleted} == \
        {(m, ("tasks",), ("tasks deleted: gamma",)) for m in ("large", "small")}
    assert [r["marks"] for r in commits["answer key of delta changed"]["rows"]] == [[], []]
    assert [r["marks"] for r in commits["a model added: large"]["rows"]] == [["new"], []]
    runner = commits[RUNNER_CHANGED[0]]["rows"]
    assert [r["changes"] for r in runner] == [["runner changed"]] * 2
    old = commit_version(repo, commits["delta graded with the new key"]["sha"])
    new = commit_version(repo, commits[GRADER_CHANGED[0]]["sha"])
    row = commits[GRADER_CHANGED[0]]["rows"][0]
    # the grader's change said as diff says it, then its split: the same Runs regraded
    assert row["changes"] == [f"grader version {old} -> {new} (graders/default.yaml changed)",
                              row["split"]["text"]]
    assert row["split"]["grader_change"] == "Checks changed: contains"
    assert row["split"]["evidence"]["same_runs"] is True
    assert all(r["split"] is None for c in commits.values() for r in c["rows"]
               if "grader" not in r["marks"])


def commit_version(repo: Path, sha: str) -> str:
    res = smevals("report", "qa", "--rev", sha, "--format", "json", cwd=repo)
    return str(json.loads(res.out)["evals"][0]["grader_version"])


def test_the_damaged_commit_shows_its_damage_and_leaves_the_pair_out(repo30) -> None:
    repo, _subjects = repo30
    commits = {c["subject"]: c for c in log_json(repo, "qa")["commits"]}
    damaged = commits[DAMAGED]
    assert damaged["damage"] == 1
    rows = {(r["config"], r["model"]): r for r in damaged["rows"]}
    assert rows[("default", "small")]["damage"] == 1
    assert rows[("default", "small")]["mean"] is None
    assert rows[("default", "large")]["damage"] == 0
    assert rows[("default", "large")]["mean"] is not None
    assert commits["the run record repaired"]["damage"] == 0
    assert len(commits[MERGED]["parents"]) == 2


def test_each_format_matches_its_golden_file(repo: Path, golden) -> None:
    for fmt, name in (("text", "log.txt"), ("markdown", "log.md"), ("csv", "log.csv"),
                      ("json", "log.json")):
        res = smevals("log", "qa", "--format", fmt, cwd=repo)
        assert (res.code, res.err) == (0, ""), fmt
        golden(name, res.out)


def test_n_since_and_first_parent_choose_the_commits(repo30) -> None:
    repo, _subjects = repo30
    everything = log_json(repo, "qa")["commits"]
    newest = log_json(repo, "qa", "-n", "5")
    assert [c["sha"] for c in newest["commits"]] == [c["sha"] for c in everything[:5]]
    assert newest["range"] == {"n": 5, "since": None, "first_parent": False}
    assert all(r["marks"] == ["new"] for r in newest["commits"][-1]["rows"])
    assert [r["mean"] for r in newest["commits"][0]["rows"]] == \
        [r["mean"] for r in everything[0]["rows"]]
    deleted = next(c["sha"] for c in everything if c["subject"] == "task gamma deleted")
    after = log_json(repo, "qa", "--since", deleted)["commits"]
    assert [c["sha"] for c in after] == git(repo, "log", "--format=%H", f"{deleted}..HEAD",
                                           "--", "qa").split()
    assert deleted not in [c["sha"] for c in after] and len(after) == 12
    first = log_json(repo, "qa", "--first-parent")
    subjects = [c["subject"] for c in first["commits"]]
    assert MERGED in subjects and not [s for s in subjects if s.startswith("side:")]
    assert first["commits_read"] == 28 and first["range"]["first_parent"]


def test_an_empty_range_says_so_and_exits_0(repo30) -> None:
    repo, _subjects = repo30
    res = smevals("log", "qa", "--since", "HEAD", cwd=repo)
    assert (res.code, res.out, res.err) == (
        0, "No commit in the range changed qa or its results (0 commits in the range).\n", "")
    doc = log_json(repo, "qa", "--since", "HEAD")
    assert (doc["commits"], doc["commits_read"]) == ([], 0)


def test_a_range_without_results_says_so(repo: Path) -> None:
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    res = smevals("log", "qa", "-n", "1", "--since", f"{first}~0", cwd=repo)
    assert res.code == 0
    only = smevals("log", "qa", "--format", "text", cwd=repo).out
    assert "eval only  (t)\n  no graded Runs that count\n" in only
    res = smevals("log", "qa", "--since", "HEAD~4", "-n", "1", cwd=repo)
    assert res.code == 2 and "--since: unknown revision 'HEAD~4'" in res.err


def test_bad_input_exits_2_naming_the_option(repo30, tmp_path: Path) -> None:
    repo, _subjects = repo30
    for args, said in ((("--since", "nope"), "Error: --since: unknown revision 'nope'"),
                       (("-n", "0"), "Invalid value for '-n' / '--max-count'"),
                       (("--format", "yaml"), "Invalid value for '--format'")):
        res = smevals("log", "qa", *args, cwd=repo)
        assert res.code == 2 and said in res.err, (args, res.err)
        assert res.out == ""
    outside = tmp_path / "outside"
    outside.mkdir()
    make_eval(outside / "ev")
    res = smevals("log", "ev", cwd=outside)
    assert res.code == 2 and "is not inside a git repository" in res.err


def test_a_shallow_clone_says_how_many_commits_it_could_read(repo30, tmp_path: Path) -> None:
    repo, _subjects = repo30
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "3", f"file://{repo}", str(clone))
    doc = log_json(clone, "qa")
    assert (doc["shallow"], doc["commits_read"], len(doc["commits"])) == (True, 3, 3)
    full = {c["sha"]: c for c in log_json(repo, "qa")["commits"]}
    for commit in doc["commits"]:
        assert [r["mean"] for r in commit["rows"]] == \
            [r["mean"] for r in full[commit["sha"]]["rows"]]
    text = smevals("log", "qa", cwd=clone).out
    assert text.splitlines()[1] == ("Shallow clone: only 3 commits could be read; the history "
                                    "before them is not in this clone (git fetch --unshallow).")


def test_damage_is_shown_in_text(repo30) -> None:
    repo, _subjects = repo30
    text = smevals("log", "qa", cwd=repo).out
    block = text.split(f"  {DAMAGED}  (t)\n")[1].split("\n\n")[0]
    assert block.splitlines()[0] == ("  damaged: 1 object(s) left out, nothing in them counted "
                                     "(see `smevals verify`)")
    assert "  default x small: " in block and "damaged object(s): figures left out" in block


def test_a_suite_starts_with_one_summary_line_per_eval_config_and_model(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "suite").mkdir(parents=True)
    history(repo / "suite")                      # suite/qa: four commits, git at suite/
    make_eval(repo / "suite" / "echo", name="echo")
    assert smevals("run", "suite/echo", cwd=repo).code == 0
    assert smevals("grade", "suite/echo", cwd=repo).code == 0
    git(repo / "suite", "add", "-A")
    git(repo / "suite", "commit", "-q", "-m", "echo results")
    res = smevals("log", "suite", "--format", "markdown", cwd=repo)
    assert (res.code, res.err) == (0, "")
    summary = res.out.split("## Summary\n\n")[1].split("\n\n## Commits")[0]
    short = git(repo / "suite", "rev-parse", "--short=7", "HEAD").strip()
    assert summary.splitlines()[2:] == [
        "| eval | config | model | commit | runs | score | pass rate | grader |",
        "|---|---|---|---|---:|---|---|---|",
        f"| echo | default | m1 | {short} | 2 | - | 100% (2/2) | {echo_version(repo)} |",
        "| qa | alt | small | 465ffbb | 1 | 0.60 | 100% (1/1) | bf3e479d7187 |",
        "| qa | default | huge | 465ffbb | 1 | 1.00 | 100% (1/1) | bf3e479d7187 |",
        "| qa | default | large | 465ffbb | 6 | 0.63 ±0.15 | 67% (4/6) | bf3e479d7187 |",
        "| qa | default | medium | 465ffbb | 1 | 0.60 | 100% (1/1) | bf3e479d7187 |",
        "| qa | default | small | 465ffbb | 10 | 0.70 ±0.08 | 90% (9/10) | bf3e479d7187 |",
        "| qa | default | tiny | 465ffbb | 1 | - | 0% (0/1) | bf3e479d7187 |"]
    doc = json.loads(smevals("log", "suite", "--format", "json", cwd=repo).out)
    assert doc["evals"] == [{"eval": "echo", "path": "suite/echo"},
                            {"eval": "qa", "path": "suite/qa"}]
    text = smevals("log", "suite", cwd=repo).out
    assert f"  echo: default x m1    █  pass 100% (2/2), score -, 2 Runs at {short}\n" in text
    assert "  qa: default x large   ·▇▅▆  pass 67% (4/6), score 0.63 ±0.15, 6 Runs at 465ffbb\n" \
        in text
    newest = text.split("\n\n")[2].splitlines()
    assert newest[0].endswith("  echo results  (t)") and newest[1:] == [
        f"  echo: default x m1: score -, pass 100% (2/2) [0.34, 1.00], 2 Runs, grader "
        f"{echo_version(repo)}, new"]


def echo_version(repo: Path) -> str:
    res = smevals("report", "suite/echo", "--format", "json", cwd=repo)
    return str(json.loads(res.out)["evals"][0]["grader_version"])


def test_an_invalid_eval_is_noted_and_a_hostile_subject_is_shown_plainly(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_eval(repo / "ev", name="ev")
    git(repo, "init", "-q", "-b", "main")
    assert smevals("run", "ev", "-g", cwd=repo).code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "results")
    (repo / "ev" / "eval.yaml").write_text("name: [unclosed\n")
    message = tmp_path / "message"
    message.write_bytes(b"broken \x1b[31mred\xff eval\n\nbody\n")
    git(repo, "commit", "-q", "-a", "-F", str(message))
    res = smevals("log", "ev", "--format", "json", cwd=repo)
    assert (res.code, res.err) == (0, "")
    newest, oldest = json.loads(res.out)["commits"]
    assert newest["subject"].startswith("broken  [31mred")        # ESC shown as a space
    assert newest["subject"].isprintable()
    assert newest["rows"] == [] and len(newest["notes"]) == 1
    assert newest["notes"][0].startswith("ev: ") and "invalid Eval at that revision" in \
        newest["notes"][0]
    assert [(r["config"], r["model"], r["runs"], r["pass_rate"]) for r in oldest["rows"]] == \
        [("default", "m1", 2, 1.0)]
    text = smevals("log", "ev", cwd=repo).out
    assert "  note: ev: " in text and "\x1b" not in text


def test_a_repository_without_commits_exits_2(tmp_path: Path) -> None:
    make_eval(tmp_path / "ev")
    git(tmp_path, "init", "-q", "-b", "main")
    res = smevals("log", "ev", cwd=tmp_path)
    assert res.code == 2 and res.out == ""
    assert res.err == (f"Error: {tmp_path.resolve()} has no commits yet: commit the Eval and "
                       "its results first (git add, git commit)\n")


def test_a_second_log_reads_the_cache_and_says_the_same(repo: Path) -> None:
    first = smevals("log", "qa", "--format", "json", cwd=repo)
    second = smevals("log", "qa", "--format", "json", cwd=repo)
    assert (first.code, second.code) == (0, 0) and first.out == second.out
    assert len(list(Path(os.environ["SMEVALS_CACHE_DIR"]).glob("log-*.marshal"))) == 1


def test_a_store_outside_the_eval_lists_the_commits_that_change_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_eval(repo / "ev", name="ev")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the eval")
    assert smevals("run", "ev", "-g", "--store", "store", cwd=repo).code == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "results in store/")
    doc = log_json(repo, "ev", "--store", "store")
    assert [(c["subject"], len(c["rows"])) for c in doc["commits"]] == \
        [("results in store/", 1), ("the eval", 0)]
    assert [c["subject"] for c in log_json(repo, "ev")["commits"]] == ["the eval"]
