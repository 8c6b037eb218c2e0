"""`smevals log` end to end on git histories of the qa Eval: every commit's figures against
`report --rev C --format json`, the marks, each format, the range options, a Suite, a
shallow clone and the bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.report.builder import git
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
