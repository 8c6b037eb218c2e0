"""What a Run after its Task's first reuses (issue 38): the starting files' bytes, kept as they
were hashed, are what each Run's workspace is written from; no Run can change them for the
next Run, and an edit of the Eval's files is still seen. And `workspace.diff`'s matcher,
which only searches between the lines both sides start and end with, still writes a diff
that turns the old file into the new one."""

from __future__ import annotations

import difflib
import os
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from smevals.evaldef import workspace as spec
from smevals.files.workspace import open_dir
from smevals.run import wsdiff
from smevals.run.workspace import settle
from tests.helpers import write

FILES = {"src/a.py": "def f():\n    return 1\n", "keep.txt": "keep\n", "tool.sh": "echo\n"}


@pytest.fixture
def ev(tmp_path: Path) -> Iterator[Path]:
    spec.forget()
    for rel, text in FILES.items():
        write(tmp_path / "ev" / "app" / rel, text)
    yield tmp_path / "ev"
    spec.forget()


def copied(start: spec.Starting, to: Path) -> spec.Stamps:
    to.mkdir()
    fd = open_dir(to)
    try:
        return spec.copy_in(start, fd)
    finally:
        os.close(fd)


def tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_a_run_that_rewrites_its_files_in_place_leaves_the_next_run_the_starting_ones(
        ev: Path, tmp_path: Path) -> None:
    start = spec.tree_of(ev, "app")
    assert start.kept is not None                         # small: its bytes are kept
    first = tmp_path / "run1"
    copied(start, first)
    for path in first.rglob("*"):                         # the agent writes through every file
        if path.is_file():
            with open(path, "r+b") as handle:
                handle.write(b"HACKED")
    again = spec.tree_of(ev, "app")
    assert again is start                                 # the Eval is as it was: reused
    copied(again, tmp_path / "run2")
    assert tree(tmp_path / "run2") == FILES == tree(ev / "app")
    assert os.stat(tmp_path / "run2" / "keep.txt").st_ino != os.stat(
        first / "keep.txt").st_ino                        # never the same file as another Run's


def test_an_edit_of_the_eval_that_keeps_size_and_times_is_still_seen(ev: Path,
                                                                     tmp_path: Path) -> None:
    start = spec.tree_of(ev, "app")
    path = ev / "app" / "keep.txt"
    info = os.stat(path)
    path.write_text("KEEP\n")                             # same size, times put back
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    again = spec.tree_of(ev, "app")
    assert again.digest != start.digest                   # the ctime moved: hashed again
    copied(again, tmp_path / "run")
    assert (tmp_path / "run" / "keep.txt").read_text() == "KEEP\n"


def test_a_large_tree_is_copied_from_the_eval_and_checked_against_its_digest(
        ev: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spec, "KEEP_TREE", 4)
    start = spec.tree_of(ev, "app")
    assert start.kept is None
    (ev / "app" / "keep.txt").write_text("swapped after hashing\n")
    with pytest.raises(spec.CopyError, match="changed while smevals read them: keep.txt"):
        copied(start, tmp_path / "run")


def test_the_kept_bytes_are_bounded_over_all_trees(ev: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "ev" / "other" / "x.txt", "x" * 100)
    monkeypatch.setattr(spec, "KEEP_ALL", 50)
    assert spec.tree_of(ev, "app").kept is not None       # 33 bytes kept
    assert spec.tree_of(ev, "other").kept is None         # 100 more would pass 50


def test_settle_diffs_against_the_kept_bytes(ev: Path, tmp_path: Path) -> None:
    start = spec.tree_of(ev, "app")
    run = tmp_path / "run"
    stamps = copied(start, run)
    (run / "src" / "a.py").write_text("def f():\n    return 2\n")
    (ev / "app" / "src" / "a.py").write_text("edited in the Eval meanwhile\n")
    fd = open_dir(run)
    try:
        done = settle(start, fd, stamps)
    finally:
        os.close(fd)
    assert done.changed == ["src/a.py"] and done.deleted == done.added == []
    assert (run / "workspace.diff").read_text() == (
        "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n"
        "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n")


def patched(old: list[str], diff: list[str]) -> list[str]:
    """`old` with a unified diff applied (the reader's side of it)."""
    out: list[str] = []
    at = 0
    for line in diff[2:]:
        if line.startswith("@@"):
            found = re.match(r"@@ -(\d+)(?:,(\d+))? ", line)
            assert found is not None
            start, count = int(found.group(1)), int(found.group(2) or 1)
            start = start - 1 if count else start
            out += old[at:start]
            at = start
        elif line[0] in " -":
            assert old[at] == line[1:]
            out += [line[1:]] if line[0] == " " else []
            at += 1
        else:
            out.append(line[1:])
    return out + old[at:]


def test_the_diff_turns_the_old_file_into_the_new_one() -> None:
    rng = random.Random(38)
    same = 0
    for _ in range(500):
        old = [rng.choice("abcde") + "\n" for _ in range(rng.randint(0, 30))]
        new = list(old)
        for _ in range(rng.randint(0, 4)):
            at = rng.randint(0, len(new))
            if rng.random() < 0.4:
                new.insert(at, rng.choice("abxyz") + "\n")
            elif new:
                del new[min(at, len(new) - 1)]
        diff = list(wsdiff._unified(old, new, "a/f", "b/f"))
        assert patched(old, diff) == new
        assert (diff == []) == (old == new)
        same += diff == list(difflib.unified_diff(old, new, "a/f", "b/f"))
    assert same > 400                                     # mostly difflib's own choice


def test_a_line_added_to_a_long_file_of_equal_lines_is_one_hunk() -> None:
    old = ["x = 1\n"] * 5000
    diff = list(wsdiff._unified(old, [*old, "y = 2\n"], "a/f", "b/f"))
    assert diff == ["--- a/f\n", "+++ b/f\n", "@@ -4998,3 +4998,4 @@\n", " x = 1\n",
                    " x = 1\n", " x = 1\n", "+y = 2\n"]


def test_a_file_rewritten_at_once_after_the_copy_keeping_size_and_mtime_is_changed(
        ev: Path, tmp_path: Path) -> None:
    """`past_tick` lets settle trust every copy's stamp: a write right after it (same size,
    mtime put back) still moves the ctime, so the file is read and found changed."""
    start = spec.tree_of(ev, "app")
    run = tmp_path / "run"
    run.mkdir()
    fd = open_dir(run)
    try:
        stamps = spec.copy_in(start, fd)
        spec.past_tick(fd, stamps)
        assert max(s[3] for rel, s in stamps.items() if rel) < stamps[spec.TICK][3]
        path = run / "keep.txt"
        info = os.stat(path)
        path.write_text("KEEP\n")
        os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
        done = settle(start, fd, stamps)
    finally:
        os.close(fd)
    assert done.changed == ["keep.txt"]
    assert sorted(os.listdir(run)) == ["keep.txt", "workspace.diff"]     # no probe left
