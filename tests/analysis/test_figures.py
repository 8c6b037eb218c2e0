"""Every figure of `report` and `log` equals the one computed from runs_df, checks_df and
history_df, and from DuckDB over the files `smevals export` writes: at each commit of a
seven-commit history here (`rev=`, `--rev`), and on every shipped suite in the working tree
where its Runs are made for their own test (each beside its golden report in
tests/suites/test_suites.py, the attack suite in tests/security/test_reward_hacking.py)."""

from __future__ import annotations

import json
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
