"""The brief view (store/brief.py) and the
git reading that reuses records by blob and tree id (store/gitindex.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smevals.store import brief, cache, gitindex, index
from smevals.store.read import Store
from tests.helpers.store import commit_all, grade_record, run_record, write_grade, write_run


def full_records(store: Store, kind: str) -> dict[str, dict[str, Any]]:
    return {o.rel: dict(o.record) for o in (store.runs() if kind == "run" else store.grades())}


def brief_records(store: Store, kind: str) -> dict[str, dict[str, Any]]:
    objs = store.runs(brief=True) if kind == "run" else store.grades(brief=True)
    return {o.rel: dict(o.record) for o in objs}


def test_the_brief_view_of_a_run_and_a_grade():
    run = {**run_record(3), "failure": None, "usage": {"input_tokens": 5}, "exit_code": 0}
    assert brief.brief("run", run) == {
        "model": "m", "status": "ok", "sample": 3, "started": "2026-01-02T03:04:05Z",
        "duration_seconds": 1, "failure": None, "task": {"name": "t1"},
        "config": {"name": "c"}, "inputs": {"hash": "h", "task": "t", "config": "c", "runner": "r"}}
    written = type("W", (), {"id": "i", "rel": "runs/t1/c/m/i"})()
    grade = {**grade_record(written), "tags": ["slow"], "checks": [
        {"checker": "contains", "ok": True, "score": 1.0, "notes": "fine"},
        {"checker": "equals", "name": "exact", "ok": False, "notes": "no", "details": {"a": 1}},
        "not a check"]}
    assert brief.brief("grade", grade) == {
        "grading_hash": "x", "graded": "2026-01-02T03:05:00Z", "outcome": "pass",
        "score": 1.0, "tags": ["slow"], "metrics": {"i": 0},
        "run": {"rel": "runs/t1/c/m/i", "task": "t1"}, "grader": {"name": "g", "version": "v1"},
        "checks": [{"checker": "contains", "ok": True, "score": 1.0},
                   {"name": "exact", "checker": "equals", "ok": False, "notes": "no"},
                   "not a check"]}


def test_malformed_parts_are_kept_as_they_are():
    assert brief.brief("run", {"task": "t9", "config": 7, "inputs": None}) == {
        "task": "t9", "config": 7, "inputs": None}
    assert brief.brief("grade", {"run": ["x"], "checks": "none"}) == {
        "run": ["x"], "checks": "none"}


def test_shared_strings_are_one_object_and_equal_values():
    memo: dict[str, str] = {}
    first = brief.brief("run", dict(run_record(1, model="".join(["mo", "del"]))), memo)
    second = brief.brief("run", dict(run_record(2, model="".join(["mod", "el"]))), memo)
    assert first["model"] is second["model"] and first["model"] == "model"
    assert first == brief.brief("run", dict(run_record(1, model="model")))


def test_brief_reads_of_a_store_equal_the_brief_view_of_full_reads(tmp_path: Path):
    root = tmp_path / "st"
    runs = [write_run(root, i) for i in range(3)]
    write_grade(root, runs[0])
    for attempt in ("cold", "warm"):
        store = Store(root)
        for kind in ("run", "grade"):
            want = {rel: brief.brief(kind, rec) for rel, rec in full_records(store, kind).items()}
            assert brief_records(store, kind) == want, attempt
    names = sorted(p.name for p in (tmp_path / "_cache").glob("*.marshal"))
    assert any(f"run-brief{brief.VERSION}.marshal" in n for n in names)
    assert any(n.endswith("-run.marshal") for n in names)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    root = repo / "st"
    runs = [write_run(root, i) for i in range(4)]
    write_grade(root, runs[0])
    commit_all(repo, "first")
    write_grade(root, runs[1], version="v2")
    commit_all(repo, "second")
    return repo


def counting_cat(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    real = gitindex.cat_files  # type: ignore[attr-defined]   # patched where it is used

    def spy(repo: Path, blobs: list[str], limit: int | None = None) -> Any:
        asked.extend(blobs)
        return real(repo, blobs, limit)

    monkeypatch.setattr(gitindex, "cat_files", spy)
    return asked


@pytest.mark.parametrize("view", [False, True])
def test_a_revision_reads_the_same_records_as_its_checkout(repo: Path, view: bool):
    root = repo / "st"
    for kind in ("run", "grade"):
        want = full_records(Store(root), kind)
        if view:
            want = {rel: brief.brief(kind, rec) for rel, rec in want.items()}
        reader = brief_records if view else full_records
        assert reader(Store(root, "HEAD"), kind) == want


def test_records_read_in_the_working_tree_are_not_read_from_git_again(
        repo: Path, monkeypatch: pytest.MonkeyPatch):
    root = repo / "st"
    Store(root).runs(brief=True)
    Store(root).grades(brief=True)                            # the index knows every blob
    asked = counting_cat(monkeypatch)
    store = Store(root, "HEAD~1")
    assert len(store.runs(brief=True)) == 4 and len(store.grades(brief=True)) == 1
    assert asked == []


def test_a_revision_read_before_is_not_listed_or_read_again(
        repo: Path, monkeypatch: pytest.MonkeyPatch):
    root = repo / "st"
    first = brief_records(Store(root, "HEAD"), "grade")
    gitindex._SEEN.clear()
    asked = counting_cat(monkeypatch)
    monkeypatch.setattr(type(Store(root, "HEAD").source), "record_blobs",
                        lambda *a: pytest.fail("listed again"))
    assert brief_records(Store(root, "HEAD"), "grade") == first
    assert asked == []


def test_a_record_changed_in_the_working_tree_is_read_from_git(
        repo: Path, monkeypatch: pytest.MonkeyPatch):
    root = repo / "st"
    obj = Store(root).runs()[0]
    path = root / obj.rel / "run.json"
    path.chmod(0o644)
    path.write_bytes(path.read_bytes().replace(b'"ok"', b'"failed"'))   # damage, on purpose
    here = Store(root)
    assert [o.rel for o in here.runs(brief=True)] == [o.rel for o in Store(root, "HEAD").runs()
                                                      if o.rel != obj.rel]
    assert [rel for rel, _why in here.broken] == [obj.rel]
    gitindex._SEEN.clear()
    gitindex._KNOWN.clear()
    asked = counting_cat(monkeypatch)
    committed = Store(root, "HEAD").runs(brief=True)
    assert [o.record["status"] for o in committed] == ["ok"] * 4
    assert len(asked) == 1                                    # only the changed blob


def test_only_the_last_revisions_are_kept(repo: Path, monkeypatch: pytest.MonkeyPatch):
    root = repo / "st"
    monkeypatch.setattr(gitindex, "KEEP", 2)
    for i in range(3):
        write_run(root, 10 + i)
        commit_all(repo, f"more {i}")
        Store(root, "HEAD").runs(brief=True)
    kept = [p for p in (repo.parent / "_cache").glob("*-run-brief*-git-*.marshal")]
    assert len(kept) == 2


def test_a_git_cache_file_for_another_store_or_label_is_not_used(repo: Path):
    root = repo / "st"
    Store(root, "HEAD").runs()
    found = cache.newest_git(root, index.label("run", False) + "-git")
    assert found is not None and len(found.rels) == 4
    assert cache.newest_git(repo / "other", index.label("run", False) + "-git") is None
