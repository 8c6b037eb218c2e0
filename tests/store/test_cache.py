"""The index cache lives outside the store, is never stale, and is safe to delete."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from smevals.files import cachefile
from smevals.files.canonical import dumps, loads
from smevals.store import cache, index
from smevals.store.read import Store
from tests.helpers.defcache import short_racy_window
from tests.helpers.store import writable, write_grade, write_run


def ids(root: Path) -> tuple[list[str], list[str]]:
    store = Store(root)
    return sorted(o.id for o in store.runs()), sorted(o.id for o in store.grades())


def left_out(root: Path) -> list[str]:
    """The Runs a read leaves out as damaged (an edited record no longer hashes to its id)."""
    store = Store(root)
    store.runs()
    return [rel for rel, _why in store.broken]


def edit_in_place(path: Path, old: bytes, new: bytes) -> None:
    """Same size, same inode: only the stamp's times can tell."""
    assert len(old) == len(new)
    writable(path)
    data = path.read_bytes()
    with open(path, "r+b") as handle:
        handle.write(data.replace(old, new))


def test_the_cache_is_kept_outside_the_store(tmp_path: Path):
    root = tmp_path / "st"
    write_run(root)
    ids(root)
    cached = sorted(p.name for p in (tmp_path / "_cache").iterdir())
    assert [n.rsplit("-", 1)[1] for n in cached] == ["grade.marshal", "run.marshal"]
    assert sorted(os.listdir(root)) == [".staging", "runs"]


@pytest.mark.skipif(sys.platform != "linux", reason="XDG locations are Linux's")
def test_the_cache_is_in_the_user_cache_dir_by_default(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("SMEVALS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cachefile.cache_dir() == tmp_path / "xdg" / "smevals"
    assert cache.cache_path(tmp_path / "st", "grade").parent == tmp_path / "xdg" / "smevals"


def test_added_removed_and_edited_objects_are_always_seen(tmp_path: Path):
    root = tmp_path / "st"
    first = write_run(root, 0)
    assert ids(root) == ([first.id], [])
    second = write_run(root, 1)
    grade = write_grade(root, first)
    assert ids(root) == (sorted([first.id, second.id]), [grade.id])
    shutil.rmtree(second.path)
    assert ids(root) == ([first.id], [grade.id])
    edit_in_place(first.path / "run.json", b'"status": "ok"', b'"status": "xx"')
    assert left_out(root) == [first.rel]                     # in the same clock tick


def test_changes_long_after_the_read_are_seen_through_the_trusted_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    short_racy_window(monkeypatch)
    root = tmp_path / "st"
    first, second = write_run(root, 0), write_run(root, 1, task="t2")
    time.sleep(index.RACY_NS / 1e9 + 0.1)
    assert ids(root)[0] == sorted([first.id, second.id])     # now cached and trusted
    old = cache.load(root, "run")
    assert old is not None and None not in old.stamps and "runs" in old.dirs
    edit_in_place(first.path / "run.json", b'"status": "ok"', b'"status": "no"')
    assert left_out(root) == [first.rel]
    third = write_run(root, 2)                                  # into a known folder
    shutil.rmtree(second.path)                                  # out of another
    assert ids(root)[0] == [third.id]


def test_a_record_replaced_by_one_with_the_same_stamp_times_is_seen(tmp_path: Path):
    root = tmp_path / "st"
    first = write_run(root, 0)
    Store(root).runs()
    path = first.path / "run.json"
    info = path.stat()
    record = loads(path.read_bytes())
    record["status"] = "zz"
    writable(path)
    path.unlink()
    path.write_bytes(dumps(record))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert left_out(root) == [first.rel]


def test_deleting_or_corrupting_the_cache_is_safe(tmp_path: Path):
    root = tmp_path / "st"
    written = [write_run(root, i).id for i in range(3)]
    assert ids(root)[0] == sorted(written)
    shutil.rmtree(tmp_path / "_cache")
    assert ids(root)[0] == sorted(written)
    for path in (tmp_path / "_cache").iterdir():
        path.write_bytes(path.read_bytes()[:100])
    assert ids(root)[0] == sorted(written)
    for path in (tmp_path / "_cache").iterdir():
        path.write_bytes(b"\x00garbage")
    assert ids(root)[0] == sorted(written)


def test_cold_and_warm_reads_agree(tmp_path: Path):
    root = tmp_path / "st"
    for i in range(20):
        write_grade(root, write_run(root, i), i)
    cold = Store(root)
    cold_objs = cold.runs() + cold.grades()
    warm = Store(root)
    assert warm.runs() + warm.grades() == cold_objs


def test_no_cache_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SMEVALS_NO_CACHE", "1")
    root = tmp_path / "st"
    written = write_run(root)
    assert ids(root) == ([written.id], [])
    assert not (tmp_path / "_cache").exists()
