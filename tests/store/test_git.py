"""Reading a store as committed at a git revision, with no checkout."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from smevals.files.canonical import dumps
from smevals.store.read import Store
from tests.helpers.store import commit_all, git, writable, write_grade, write_run


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    root = repo / "st"
    first = write_run(root, 0)
    write_grade(root, first)
    commit_all(repo, "first")
    write_run(root, 1)
    commit_all(repo, "second")
    return repo


def test_reading_at_head_sees_exactly_the_committed_objects(repo: Path):
    root = repo / "st"
    committed = sorted(o.id for o in Store(root).runs())
    added = write_run(root, 2)                              # working tree changes...
    shutil.rmtree(root / Store(root).resolve(committed[0]).rel)
    store = Store(root, "HEAD")
    assert sorted(o.id for o in store.runs()) == committed
    assert added.id not in {o.id for o in store.runs()}
    assert len(store.grades()) == 1
    assert len(Store(root, "HEAD~1").runs()) == 1
    shutil.rmtree(root)                                    # ...even no working tree at all
    assert sorted(o.id for o in Store(root, "HEAD").runs()) == committed


def test_verify_and_show_at_a_revision(cli, repo: Path):
    root = repo / "st"
    run = Store(root).runs()[0]
    out = root / run.rel / "output.txt"
    writable(out)
    out.write_text("changed in the working tree only\n")
    assert cli("verify", "st", cwd=repo).code == 1
    res = cli("verify", "st", "--rev", "HEAD", cwd=repo)
    assert (res.code, res.out) == (0, "OK: 3 object(s) verified, no problems\n")
    res = cli("show", run.id[-12:], "st", "--rev", "HEAD", "--file", "output.txt", cwd=repo)
    assert (res.code, res.out) == (0, f"out {run.record['sample']}\n")
    res = cli("show", run.id, "st", "--rev", "HEAD", cwd=repo)
    assert res.code == 0
    assert res.out.splitlines()[:2] == [f"run {run.id}", f"path: HEAD:st/{run.rel}"]
    assert res.out.endswith(dumps(run.record).decode())


def test_damage_that_was_committed_is_found_at_that_revision(cli, repo: Path):
    root = repo / "st"
    run = Store(root).runs()[0]
    out = root / run.rel / "output.txt"
    writable(out)
    out.write_text("tampered\n")
    (root / run.rel / "extra.txt").write_text("x")
    commit_all(repo, "tampered")
    res = cli("verify", "st", "--rev", "HEAD", cwd=repo)
    assert res.code == 1
    assert res.out.splitlines() == [
        f"HEAD:st/{run.rel}/extra.txt: extra file: in the folder but not listed in the record",
        f"HEAD:st/{run.rel}/output.txt: size changed: 6 bytes recorded, 9 found",
    ]
    assert cli("verify", "st", "--rev", "HEAD~1", cwd=repo).code == 0


def test_a_file_changed_to_the_same_size_is_found_at_that_revision(cli, repo: Path):
    """At a revision, each file is hashed as git streams it (never held whole)."""
    root = repo / "st"
    run = Store(root).runs()[0]
    out = root / run.rel / "output.txt"
    size = out.stat().st_size
    writable(out)
    out.write_text("z" * (size - 1) + "\n")
    commit_all(repo, "same size")
    res = cli("verify", "st", "--rev", "HEAD", cwd=repo)
    assert (res.code, res.out.splitlines()) == (1, [
        f"HEAD:st/{run.rel}/output.txt: content changed: sha256 does not match the record"])
    assert cli("verify", "st", "--rev", "HEAD~1", cwd=repo).code == 0


def test_unknown_revision_and_no_repository_exit_2(cli, repo: Path, tmp_path: Path):
    res = cli("verify", "st", "--rev", "nope", cwd=repo)
    assert (res.code, res.out, res.err) == (2, "", "Error: unknown revision 'nope'\n")
    res = cli("show", "abcdef", "st", "--rev", "-x", cwd=repo)
    assert (res.code, res.err) == (2, "Error: unknown revision '-x'\n")
    outside = tmp_path / "outside"
    write_run(outside / "st")
    res = cli("verify", "st", "--rev", "HEAD", cwd=outside)
    assert res.code == 2
    assert res.err.startswith("Error: st is not inside a git repository")


def test_an_object_added_after_the_revision_is_unknown_there(cli, repo: Path):
    added = write_run(repo / "st", 9)
    res = cli("show", added.id, "st", "--rev", "HEAD", cwd=repo)
    assert (res.code, res.err) == (2, f"Error: no Run or Grade with id '{added.id}' in the "
                                      "stores of st\n")
    assert cli("show", added.id, "st", cwd=repo).code == 0


def test_a_store_that_is_the_repository_itself(tmp_path: Path):
    root = tmp_path / "store"
    written = write_run(root, 0)
    commit_all(root)
    store = Store(root, "HEAD")
    assert [o.id for o in store.runs()] == [written.id]
    assert store.read_file(store.runs()[0], "output.txt") == b"out 0\n"


def test_staging_leftovers_never_reach_a_commit(tmp_path: Path):
    repo = tmp_path / "repo"
    root = repo / "st"
    write_run(root, 0)
    leftover = Store(root).stage("run")                 # a write that never finishes
    (leftover.dir / "output.txt").write_text("half\n")
    assert (root / ".staging" / ".gitignore").read_text() == "*\n"
    commit_all(repo, "results")
    listed = git(repo, "ls-files").splitlines()
    assert listed and not [p for p in listed if ".staging" in p]
    assert len(Store(root, "HEAD").runs()) == 1
    leftover.abort()
