"""A private writable copy of a folder for code nobody reviewed to work in.

`private_copy(source, dest)` copies the regular files and folders of `source` into `dest`
without following any link: every name is opened relative to its folder's descriptor
with O_NOFOLLOW (and O_NONBLOCK, so a FIFO never blocks), then checked to be a regular
file or a folder. Symbolic links, FIFOs, sockets and devices are left out and named in
`Copied.dropped` (`path (symlink)`), so the copy holds nothing that leads out of it and
nothing that can block. A file's executable bits are kept and every copy is writable by
its owner. The copy is bounded: more than `max_files` entries or `max_bytes` bytes, or
folders nested deeper than `max_depth`, raise CopyLimit naming the limit (a partial copy
is never handed out).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_FILES", "CopyLimit", "Copied", "private_copy"]

MAX_FILES = 10_000
MAX_BYTES = 256 * 1024 * 1024
MAX_DEPTH = 64
_CHUNK = 1 << 20
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class CopyLimit(Exception):
    """The folder is larger than the copy may be (which limit, in the message)."""


@dataclass
class Copied:
    files: int = 0
    folders: int = 0
    bytes: int = 0
    dropped: list[str] = field(default_factory=list)   # "path (kind)", never copied


@dataclass
class _Budget:
    max_files: int
    max_bytes: int
    max_depth: int


def private_copy(source: Path, dest: Path, max_files: int = MAX_FILES,
                 max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Copied:
    """Copy `source`'s regular files and folders into `dest` (made if missing); a link,
    FIFO, socket or device is left out and named. CopyLimit past a limit; OSError when
    `source` is not a folder (or is a link to one)."""
    dest.mkdir(parents=True, exist_ok=True)
    done = Copied()
    budget = _Budget(max_files, max_bytes, max_depth)
    fd = os.open(source, _DIR)
    try:
        out = os.open(dest, _DIR)
        try:
            _copy_dir(fd, out, "", 0, budget, done)
        finally:
            os.close(out)
    finally:
        os.close(fd)
    done.dropped.sort()
    return done


def _copy_dir(fd: int, dest: int, where: str, depth: int, budget: _Budget,
              done: Copied) -> None:
    """`fd`'s entries into the folder `dest` (both descriptors)."""
    if depth > budget.max_depth:
        raise CopyLimit(f"folders nested deeper than {budget.max_depth} ({_show(where)})")
    with os.scandir(fd) as found:
        entries = sorted(found, key=lambda e: e.name)
    for entry in entries:              # the type from the listing (d_type): no stat here
        rel = f"{where}{entry.name}"
        if done.files + done.folders >= budget.max_files:
            raise CopyLimit(f"more than {budget.max_files} files and folders")
        if entry.is_dir(follow_symlinks=False):
            _copy_sub(fd, entry.name, dest, rel, depth, budget, done)
        elif entry.is_file(follow_symlinks=False):
            _copy_file(fd, entry.name, dest, rel, budget, done)
        else:
            mode = entry.stat(follow_symlinks=False).st_mode
            done.dropped.append(f"{_show(rel)} ({_kind(mode)})")


def _copy_sub(fd: int, name: str, dest: int, rel: str, depth: int, budget: _Budget,
              done: Copied) -> None:
    try:
        sub = os.open(name, _DIR, dir_fd=fd)
    except OSError:                     # replaced by a link since it was listed: never followed
        done.dropped.append(f"{_show(rel)} (changed while copied)")
        return
    try:
        done.folders += 1
        os.mkdir(name, 0o700, dir_fd=dest)
        target = os.open(name, _DIR, dir_fd=dest)
        try:
            _copy_dir(sub, target, rel + "/", depth + 1, budget, done)
        finally:
            os.close(target)
    finally:
        os.close(sub)


def _copy_file(fd: int, name: str, dest: int, rel: str, budget: _Budget,
               done: Copied) -> None:
    try:
        src = os.open(name, _FILE, dir_fd=fd)
    except OSError:
        done.dropped.append(f"{_show(rel)} (changed while copied)")
        return
    try:
        st = os.fstat(src)
        if not stat.S_ISREG(st.st_mode):       # replaced since it was listed
            done.dropped.append(f"{_show(rel)} ({_kind(st.st_mode)})")
            return
        done.files += 1
        if done.bytes + st.st_size > budget.max_bytes:
            raise CopyLimit(f"more than {budget.max_bytes} bytes")
        out = os.open(name, _NEW, (st.st_mode & 0o755) | 0o600, dir_fd=dest)
        try:
            _pump(src, out, budget, done)
        finally:
            os.close(out)
    finally:
        os.close(src)


def _pump(src: int, out: int, budget: _Budget, done: Copied) -> None:
    """Copy to the end of `src` (it may have grown since its stat: still bounded)."""
    while True:
        try:
            sent = os.sendfile(out, src, None, min(_CHUNK, budget.max_bytes - done.bytes + 1))
        except OSError:
            sent = _pump_slowly(src, out, budget, done)
        if not sent:
            return
        done.bytes += sent
        if done.bytes > budget.max_bytes:
            raise CopyLimit(f"more than {budget.max_bytes} bytes")


def _pump_slowly(src: int, out: int, budget: _Budget, done: Copied) -> int:
    """One chunk by read and write (where sendfile cannot copy between these files)."""
    chunk = os.read(src, min(_CHUNK, budget.max_bytes - done.bytes + 1))
    view = memoryview(chunk)
    while view:
        view = view[os.write(out, view):]
    return len(chunk)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


def _show(name: str) -> str:
    """A name as text (a byte that is not UTF-8 shown as U+FFFD)."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
