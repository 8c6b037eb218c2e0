"""The index cache lives outside the store, is never stale, and is safe to delete."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from smevals.store import cache, index, scan, walk
from smevals.store.canonical import dumps, loads
from smevals.store.store import Store
from tests.store.helpers import writable, write_grade, write_run


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
    assert [n.rsplit("-", 1)[1] for n in cached] == ["grade.dirs", "grade.marshal", "run.dirs",
                                                     "run.marshal"]
    assert sorted(os.listdir(root)) == [".staging", "runs"]


@pytest.mark.skipif(sys.platform != "linux", reason="XDG locations are Linux's")
def test_the_cache_is_in_the_user_cache_dir_by_default(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("SMEVALS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "smevals"
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


@pytest.mark.parametrize("child", [False, True])
def test_changes_long_after_the_read_are_seen_through_the_trusted_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, child: bool):
    if child:
        monkeypatch.setattr(scan, "CHILD_MIN_BYTES", 0)     # list in a forked child
    root = tmp_path / "st"
    first, second = write_run(root, 0), write_run(root, 1, task="t2")
    time.sleep(index.RACY_NS / 1e9 + 0.1)
    assert ids(root)[0] == sorted([first.id, second.id])     # now cached and trusted
    old = cache.load(root, "run")
    assert old is not None and old.trusted
    edit_in_place(first.path / "run.json", b'"status": "ok"', b'"status": "no"')
    assert left_out(root) == [first.rel]
    third = write_run(root, 2)                                  # into a known folder
    shutil.rmtree(second.path)                                  # out of another
    assert ids(root)[0] == [third.id]
    assert walk.load(cache.dirs_path(root, "run"))


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


def test_a_big_store_is_listed_by_a_child_process(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "st"
    runs = [write_run(root, i).id for i in range(30)]
    assert ids(root)[0] == sorted(runs)
    monkeypatch.setattr(scan, "CHILD_MIN_BYTES", 0)
    made = []
    real = scan.Child

    def spy(*args: Any) -> scan.Child:
        made.append(args)
        return real(*args)

    monkeypatch.setattr(scan, "Child", spy)
    extra = write_run(root, 99)
    assert ids(root)[0] == sorted([*runs, extra.id])
    assert made and [job[0] for job in made[0][1]] == ["run"]
    child = real(str(root), [("run", 3, "run.json", ""), ("grade", 4, "grade.json", "")], 0)
    assert child.result() == [scan.listing(str(root), "run", 3, "run.json"),
                              scan.listing(str(root), "grade", 4, "grade.json")]


def test_a_failing_child_falls_back_to_listing_here(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "st"
    written = write_run(root)
    Store(root).runs()
    monkeypatch.setattr(scan, "CHILD_MIN_BYTES", 0)
    real = scan.Child.result
    monkeypatch.setattr(scan.Child, "result", lambda self: real(self) and None)
    write_run(root, 5)
    assert len(Store(root).runs()) == 2 and written.id in ids(root)[0]


def test_a_child_started_for_a_cache_that_turns_out_unreadable_is_reaped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "st"
    written = write_run(root)
    Store(root).runs()
    monkeypatch.setattr(scan, "CHILD_MIN_BYTES", 0)
    cache.cache_path(root, "run").write_bytes(b"\x00" * 64)
    assert ids(root)[0] == [written.id]
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)                 # no child left behind


@pytest.mark.parametrize("threads", [1, 2])
def test_reading_ahead_on_a_slow_disk_gives_the_same_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: int):
    root = tmp_path / "st"
    written = sorted(write_run(root, i).id for i in range(40))
    monkeypatch.setattr(index, "SLOW_READ", -1.0)      # every file seems slow
    monkeypatch.setattr(index, "READ_CHUNK", 2)
    monkeypatch.setattr(index.threading, "active_count", lambda: threads)   # 2: no fork
    cold = Store(root)
    assert sorted(o.id for o in cold.runs()) == written
    assert [o.record["sample"] for o in cold.runs()] == [
        o.record["sample"] for o in Store(root).runs()]
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)                 # every helper was reaped


def test_a_child_started_beside_other_threads_is_a_fresh_interpreter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    root = tmp_path / "st"
    run = write_run(root, 0)
    write_grade(root, run)
    monkeypatch.setattr(scan.threading, "active_count", lambda: 2)     # forking is unsafe
    jobs = [("run", 3, "run.json", ""), ("grade", 4, "grade.json", "")]
    child = scan.Child(str(root), jobs, 0)
    assert child.proc is not None
    assert child.result() == [scan.listing(str(root), "run", 3, "run.json"),
                              scan.listing(str(root), "grade", 4, "grade.json")]
