"""The listing that tells whether cached records are still valid: every object folder of one
kind, in sorted order, with the stat stamp (inode, size, mtime and ctime in ns) of its record.

The listing is plain bytes, so comparing it with the cached one is a single memcmp: items
separated by NUL, `/<parent folder>` starting each group, then `<object folder>/<stamp>`
(names hold no `/`). For a big store it is made by a child process while the parent
decodes the cache, so the stat calls and the decoding run on two cores at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
from typing import IO

from smevals.store import walk

MISSING = "-"
CHILD_MIN_BYTES = 8 << 20       # a cache file at least this big is checked by a child
_END = b"\n--end--\n"


def listing(root: str, kind: str, depth: int, record: str, dirs_cache: str = "",
            racy_ns: int = 0) -> bytes:
    """The listing of every object folder `depth` levels below `<root>/<kind>s`; with
    `dirs_cache`, the folder snapshot kept there is used and brought up to date."""
    old = walk.load(dirs_cache) if dirs_cache else None
    groups, new = walk.object_groups(root, kind, depth, old, racy_ns)
    if dirs_cache and new != old:
        walk.save(dirs_cache, new)
    return stat_groups(root, groups, record)


def stat_groups(root: str, groups: walk.Groups, record: str) -> bytes:
    out: list[str] = []
    suffix = "/" + record
    stat = os.stat
    for parent, names in groups:
        try:
            fd = os.open(os.path.join(root, parent), os.O_RDONLY)
        except OSError:
            continue
        out.append("/" + parent)
        try:
            for name in names:
                try:
                    st = stat(name + suffix, dir_fd=fd)
                except OSError:
                    out.append(f"{name}/{MISSING}")
                    continue
                out.append(f"{name}/{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")
        finally:
            os.close(fd)
    return "\0".join(out).encode("utf-8", "surrogateescape")


def stamp(st: os.stat_result) -> str:
    return f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


def parse(data: bytes) -> tuple[list[str], list[str]]:
    """(rels, stamps) of a listing."""
    rels: list[str] = []
    stamps: list[str] = []
    parent = ""
    for item in data.decode("utf-8", "surrogateescape").split("\0"):
        if item.startswith("/"):
            parent = item[1:]
        elif item:
            name, _, found = item.partition("/")
            rels.append(f"{parent}/{name}")
            stamps.append(found)
    return rels, stamps


def join(rels: list[str], stamps: list[str]) -> bytes:
    """The listing of these (rel, stamp) pairs (sorted by rel), as `listing` makes it."""
    out: list[str] = []
    current = None
    for rel, found in zip(rels, stamps, strict=True):
        parent, _, name = rel.rpartition("/")
        if parent != current:
            out.append("/" + parent)
            current = parent
        out.append(f"{name}/{found}")
    return "\0".join(out).encode("utf-8", "surrogateescape")


def changed_since(found: str, since_ns: int) -> bool:
    """Whether a record's mtime or ctime is at or after `since_ns` (or it has no stamp)."""
    if found == MISSING:
        return True
    _ino, _size, mtime, ctime = found.split(":")
    return int(mtime) >= since_ns or int(ctime) >= since_ns


Job = tuple[str, int, str, str]     # kind, depth, record name, folder snapshot cache


class Child:
    """The listings of `jobs`, one after another, made by a child process into an unnamed
    temporary file: forked when this process runs no other thread (no interpreter to
    start), else a fresh interpreter."""

    def __init__(self, root: str, jobs: list[Job], racy_ns: int):
        args = [root, str(racy_ns), *(str(part) for job in jobs for part in job)]
        self.jobs = len(jobs)
        self.out: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115  (closed by result)
        self.proc: subprocess.Popen[bytes] | None = None
        self.pid = 0
        try:
            if hasattr(os, "fork") and threading.active_count() == 1:
                self.pid = _fork(self.out.fileno(), args)
            else:
                self.proc = subprocess.Popen(
                    [sys.executable, "-I", "-m", "smevals.store.scan", *args], stdout=self.out,
                    stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        except OSError:
            self.out.close()
            raise

    def cancel(self) -> None:
        """Stop the child and forget its listings."""
        if self.proc:
            self.proc.kill()
        else:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        self.result()

    def result(self) -> list[bytes] | None:
        """The listings (call once), or None when the child failed (the caller then lists
        by itself)."""
        try:
            code = self.proc.wait() if self.proc else os.waitstatus_to_exitcode(
                os.waitpid(self.pid, 0)[1])
            self.out.seek(0)
            data = self.out.read()
        finally:
            self.out.close()
        if code != 0 or not data.endswith(_END):
            return None
        return _split(data[: -len(_END)], self.jobs)


class Ahead:
    """Listings of every kind being made by a child process, for whoever needs one first."""

    def __init__(self, child: Child, kinds: list[str], racy_ns: int):
        self.child: Child | None = child
        self.kinds = kinds
        self.racy_ns = racy_ns
        self.found: dict[str, bytes] = {}

    def take(self, kind: str) -> bytes | None:
        """The listing of `kind` (waits for the child once), or None when it failed or was
        taken already: a listing is used once, a later read lists afresh."""
        if self.child is not None:
            child, self.child = self.child, None
            self.found = dict(zip(self.kinds, child.result() or [], strict=False))
        return self.found.pop(kind, None)

    def cancel(self) -> None:
        if self.child is not None:
            child, self.child = self.child, None
            child.cancel()


def _split(data: bytes, count: int) -> list[bytes] | None:
    """The length-prefixed parts of `data`, or None unless there are exactly `count`."""
    parts, at = [], 0
    while at < len(data):
        eol = data.find(b"\n", at)
        if eol < 0 or not data[at:eol].isdigit():
            return None
        size = int(data[at:eol])
        parts.append(data[eol + 1:eol + 1 + size])
        at = eol + 1 + size
    return parts if len(parts) == count and at == len(data) else None


def _fork(fd: int, args: list[str]) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:                                   # the child: nothing here may return
        data = _work(args) + _END
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        code = 0
    finally:
        os._exit(code)


def _work(args: list[str]) -> bytes:
    root, racy_ns, rest = args[0], int(args[1]), args[2:]
    out = []
    for at in range(0, len(rest), 4):
        kind, depth, record, dirs_cache = rest[at:at + 4]
        found = listing(root, kind, int(depth), record, dirs_cache, racy_ns)
        out.append(b"%d\n" % len(found) + found)
    return b"".join(out)


def main(argv: list[str]) -> int:
    sys.stdout.buffer.write(_work(argv) + _END)
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
