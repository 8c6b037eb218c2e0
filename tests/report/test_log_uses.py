"""`smevals log` lists the commits that change what an Eval uses from outside its folder (a
shared runner, a checker program, a database named by path), marked as `diff` marks them,
and not those that change such a file while the Eval does not use it; `--all` and a
deleted Eval's path list an Eval up to its deletion (issue 41 item 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import make_eval
from tests.report.builder import commit, git, write
from tests.report.conftest import smevals

RUN = '#!/bin/sh\necho "select count(*) from items"\n'
CHECK = "#!/bin/sh\necho '{\"score\": 1}'\n"
SCHEMA = "create table items (id integer);\ninsert into items values (1);\n"
GRADER = ("checks:\n  - checker: ../../../shared/check.sh\n  - checker: sql_execution\n"
          "    database: ../../../data/shop.sql\n    reference: select count(*) from items\n")


def log_json(repo: Path, *args: str) -> dict[str, Any]:
    res = smevals("log", *args, "--format", "json", cwd=repo)
    assert res.code == 0, res.err
    return json.loads(res.out)


def graded(repo: Path, subject: str) -> None:
    assert smevals("run", "evals/ev", "-g", cwd=repo).code == 0
    commit(repo, subject)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An Eval whose runner, checker program and database lie outside its folder."""
    repo = tmp_path_factory.mktemp("uses") / "repo"
    make_eval(repo / "evals" / "ev", name="ev", tasks={"count": "prompt: count the items\n"},
              configs={"default": "runner: ../../../shared/run.sh\nmodel: m1\n",
                       "other": "runner: ../../../shared/run2.sh\nmodel: m2\n"},
              graders={"default": GRADER}, files={})
    write(repo / "shared" / "run.sh", RUN, 0o755)
    write(repo / "shared" / "run2.sh", RUN, 0o755)
    write(repo / "shared" / "check.sh", CHECK, 0o755)
    write(repo / "data" / "shop.sql", SCHEMA)
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "the eval and what it shares")
    graded(repo, "results")
    write(repo / "shared" / "run.sh", RUN + "# v2\n", 0o755)
    commit(repo, "the shared runner edited")
    graded(repo, "new results")
    write(repo / "shared" / "check.sh", CHECK + "# v2\n", 0o755)
    commit(repo, "the shared checker edited")
    assert smevals("grade", "evals/ev", cwd=repo).code == 0
    commit(repo, "regraded")
    write(repo / "data" / "shop.sql", SCHEMA + "insert into items values (2);\n")
    commit(repo, "the database edited")
    write(repo / "shared" / "notes.txt", "not used by the Eval\n")
    commit(repo, "a file nobody uses")
    write(repo / "evals" / "ev" / "configs" / "default.yaml",
          "runner: ../../../shared/run2.sh\nmodel: m1\n")
    commit(repo, "default runs run2.sh now")
    write(repo / "shared" / "run.sh", RUN + "# v3, unused now\n", 0o755)
    commit(repo, "the runner no config uses any more edited")
    write(repo / "shared" / "run2.sh", RUN + "# v2\n", 0o755)
    commit(repo, "run2.sh edited")
    return repo


LISTED = ["run2.sh edited", "default runs run2.sh now", "the database edited", "regraded",
          "the shared checker edited", "new results", "the shared runner edited", "results",
          "the eval and what it shares"]


def test_a_commit_that_changes_only_a_file_the_eval_uses_is_listed(shared: Path) -> None:
    doc = log_json(shared, "evals/ev")
    assert [c["subject"] for c in doc["commits"]] == LISTED
    assert doc["commits_read"] == 11
    text = smevals("log", "evals/ev", cwd=shared).out
    assert "a file nobody uses" not in text and "any more edited" not in text


def test_each_is_marked_as_diff_says_it(shared: Path) -> None:
    commits = {c["subject"]: c for c in log_json(shared, "evals/ev")["commits"]}
    marks = {s: [(r["config"], r["model"], r["runs"], r["marks"]) for r in c["rows"]]
             for s, c in commits.items()}
    # its Runs are stale there: a row with 0 Runs carries the mark
    assert marks["the shared runner edited"] == [("default", "m1", 0, ["runner"])]
    assert marks["new results"] == [("default", "m1", 1, [])]
    versions = [commits[s]["rows"][0]["grader_version"] for s in
                ("new results", "the shared checker edited", "regraded", "the database edited")]
    assert commits["the shared checker edited"]["rows"][0]["changes"] == \
        [f"grader version {versions[0]} -> {versions[1]} (../../../shared/check.sh changed)"]
    assert versions[1] == versions[2] != versions[3]
    assert commits["the database edited"]["rows"][0]["changes"] == \
        [f"grader version {versions[2]} -> {versions[3]} (../../../data/shop.sql changed)"]
    assert [r["marks"] for r in commits["run2.sh edited"]["rows"]] == [["runner"]]
    switched = commits["default runs run2.sh now"]["rows"]
    assert [(r["config"], r["marks"]) for r in switched] == [("default", ["config", "runner"])]


def test_the_grader_version_at_head_is_the_working_trees(shared: Path) -> None:
    # the database lies outside the Eval: read as committed, not found missing
    res = smevals("report", "evals/ev", "--format", "json", "--include-stale", cwd=shared)
    version = json.loads(res.out)["evals"][0]["grader_version"]
    head = log_json(shared, "evals/ev")["commits"][0]
    assert [r["grader_version"] for r in head["rows"]] == [version]
    at_rev = smevals("report", "evals/ev", "--rev", "HEAD", "--format", "json",
                     "--include-stale", cwd=shared)
    assert json.loads(at_rev.out)["evals"][0]["grader_version"] == version


def test_n_keeps_the_newest_of_them_and_a_second_log_says_the_same(shared: Path) -> None:
    first = log_json(shared, "evals/ev", "-n", "3")
    assert [c["subject"] for c in first["commits"]] == LISTED[:3]
    again = smevals("log", "evals/ev", "-n", "3", "--format", "json", cwd=shared)
    assert json.loads(again.out)["commits"] == first["commits"]
    since = git(shared, "rev-parse", "HEAD~4").strip()
    assert [c["subject"] for c in log_json(shared, "evals/ev", "--since", since)["commits"]] \
        == LISTED[:2]


@pytest.fixture(scope="module")
def deleted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two Evals; `old` is deleted, then one Eval moves from `a` to `b`."""
    repo = tmp_path_factory.mktemp("deleted") / "repo"
    make_eval(repo / "suite" / "kept", name="kept")
    make_eval(repo / "suite" / "old", name="old")
    make_eval(repo / "a", name="moved")
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "three evals")
    assert smevals("run", "suite", "-g", cwd=repo).code == 0
    commit(repo, "results")
    git(repo, "rm", "-q", "-r", "suite/old")
    commit(repo, "old deleted")
    git(repo, "mv", "a", "b")
    commit(repo, "a moved to b")
    assert smevals("run", "suite/kept", "-g", cwd=repo).code == 0
    commit(repo, "more results")
    return repo


def test_a_deleted_eval_is_listed_up_to_its_deletion_when_asked(deleted: Path) -> None:
    plain = log_json(deleted, "suite")
    assert plain["evals"] == [{"eval": "kept", "path": "suite/kept"}]
    every = log_json(deleted, "suite", "--all")
    assert every["evals"] == [{"eval": "kept", "path": "suite/kept"},
                              {"eval": "old", "path": "suite/old"}]
    by = {c["subject"]: c for c in every["commits"]}
    assert [c["subject"] for c in every["commits"]] == ["more results", "old deleted",
                                                       "results", "three evals"]
    assert by["old deleted"]["notes"] == [
        "suite/old: the Eval is not in this commit (its eval.yaml was deleted or moved)"]
    assert by["old deleted"]["evals"] == [] and by["old deleted"]["rows"] == []
    assert [(r["eval"], r["runs"]) for r in by["results"]["rows"]] == [("kept", 2), ("old", 2)]
    alone = log_json(deleted, "suite/old")
    assert [c["subject"] for c in alone["commits"]] == ["old deleted", "results",
                                                       "three evals"]
    assert alone["evals"] == [{"eval": "old", "path": "suite/old"}]
    text = smevals("log", "suite/old", cwd=deleted).out
    assert text.split("\n\n")[2].splitlines()[1:] == [
        "  note: suite/old: the Eval is not in this commit (its eval.yaml was deleted or moved)"]
    top = log_json(deleted, "--all")
    assert [e["path"] for e in top["evals"]] == ["a", "b", "suite/kept", "suite/old"]
    moved = log_json(deleted, "a")
    assert [c["subject"] for c in moved["commits"]] == ["a moved to b", "three evals"]


def test_a_path_with_no_eval_now_nor_before_exits_2(deleted: Path) -> None:
    res = smevals("log", "nope", cwd=deleted)
    assert (res.code, res.out) == (2, "")
    assert res.err == ("Error: nope: no such file or folder, and no Eval was deleted from it "
                       "in the history of HEAD\n")
    (deleted / "empty").mkdir()
    res = smevals("log", "empty", cwd=deleted)
    assert res.code == 2 and "empty is not an Eval or a Suite" in res.err
