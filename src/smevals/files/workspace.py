"""The files a runner (or a checker) left in a workspace: listed, hashed, sealed and replaced
without ever following a link, blocking on a FIFO or touching a file outside the workspace.

Everything is done relative to the workspace folder's descriptor, one name at a time:
folders are entered with O_NOFOLLOW, files are looked at with lstat and opened with
O_NOFOLLOW | O_NONBLOCK, then checked with fstat. A symlink is recorded as a symlink (its
target, never read), a FIFO, socket or device as a special file (never opened). A regular
file with other hard links (say, to a file outside the workspace) is copied into a file of
its own before it is sealed, so the store never shares an inode with, nor changes the mode
of, a file elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
from pathlib import Path
from typing import NotRequired, TypedDict

from smevals.files.regular import NotRegular, describe, open_regular

_CHUNK = 1 << 20
_DIR = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_CLOEXEC", 0))
_NEW = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_CLOEXEC", 0))


class FileEntry(TypedDict):
    """One file of an object's manifest: a regular file by size and sha256, a symlink by its
    target, anything else as special."""

    path: str
    size: NotRequired[int]
    sha256: NotRequired[str]
    symlink: NotRequired[str]
    special: NotRequired[bool]


class BadName(ValueError):
    """A file name in the workspace that is not valid UTF-8 (the message holds its path)."""


def open_dir(path: Path | str, dir_fd: int | None = None) -> int:
    """A descriptor of the folder `path`, which must not be a symlink."""
    return os.open(path, _DIR, dir_fd=dir_fd)


def manifest_at(fd: int, seal: bool = False, copy: int | None = None) -> list[FileEntry]:
    """Every file below the folder `fd` (path, size, sha256; a symlink by its target; a FIFO,
    socket or device as special), sorted by path. With `seal`, each regular file is made
    read-only (a copy first when it has other hard links); the caller fsyncs the whole tree
    at once before the rename (files.durable.fsync_tree). With `copy` (an empty folder's
    descriptor), every file is also copied there as listed, from the very bytes hashed:
    folders, symlinks (by their target) and regular files (read-only); a special file is
    listed, never copied (as store.checkedcopy copies an object)."""
    out: list[FileEntry] = []
    _walk(fd, "", seal, out, copy)
    out.sort(key=lambda e: e["path"])
    return out


def _walk(fd: int, prefix: str, seal: bool, out: list[FileEntry], copy: int | None) -> None:
    with os.scandir(fd) as it:
        names = sorted(entry.name for entry in it)
    for name in names:
        rel = prefix + name
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            raise BadName(f"file name {rel!r} is not valid UTF-8") from None
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            _folder(fd, name, rel, seal, out, copy)
        elif stat.S_ISLNK(info.st_mode):
            target = os.readlink(name, dir_fd=fd)
            if copy is not None:
                os.symlink(target, name, dir_fd=copy)
            out.append({"path": rel, "symlink": target})
        elif stat.S_ISREG(info.st_mode):
            out.append(_regular(fd, name, rel, seal, copy))
        else:
            out.append({"path": rel, "special": True})


def _folder(fd: int, name: str, rel: str, seal: bool, out: list[FileEntry],
            copy: int | None) -> None:
    inner, inner_copy = open_dir(name, fd), None
    try:
        if copy is not None:
            os.mkdir(name, 0o700, dir_fd=copy)
            inner_copy = open_dir(name, copy)
        _walk(inner, rel + "/", seal, out, inner_copy)
    finally:
        os.close(inner)
        if inner_copy is not None:
            os.close(inner_copy)


def _regular(fd: int, name: str, rel: str, seal: bool, copy: int | None) -> FileEntry:
    try:
        handle, info = open_regular(name, fd)
    except NotRegular:                      # swapped since the lstat: as it is now
        return {"path": rel, "special": True}
    out = None
    try:
        if copy is not None:
            out = os.open(name, _NEW, 0o600, dir_fd=copy)
        if seal and info.st_nlink > 1:
            size, digest = _copy_own(fd, name, handle, info, out)
        else:
            size, digest = hash_copy(handle, out, hint=info.st_size)
            if seal:
                os.fchmod(handle, stat.S_IMODE(info.st_mode) & ~0o222)
        if out is not None:
            os.fchmod(out, stat.S_IMODE(info.st_mode) & 0o555)
    finally:
        os.close(handle)
        if out is not None:
            os.close(out)
    return {"path": rel, "size": size, "sha256": digest}


def _copy_own(fd: int, name: str, source: int, info: os.stat_result,
              also: int | None = None) -> tuple[int, str]:
    """Replace the name `name` (a file with other hard links) by a sealed copy of its bytes
    with a link count of 1; the other links and their inode are left as they are. With
    `also`, the bytes are written to that descriptor too."""
    temp = f".smevals-copy-{uuid.uuid4().hex[:12]}"
    out = os.open(temp, _NEW, 0o600, dir_fd=fd)
    try:
        size, digest = hash_copy(source, out, also, info.st_size)
        os.fchmod(out, stat.S_IMODE(info.st_mode) & ~0o222)
        os.rename(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except BaseException:
        os.unlink(temp, dir_fd=fd)
        raise
    finally:
        os.close(out)
    return size, digest


def hash_copy(source: int, copy: int | None, also: int | None = None,
              hint: int = _CHUNK) -> tuple[int, str]:
    """(size, sha256) of what is left to read from the descriptor `source`, read in chunks
    and, with `copy` (and `also`), written to that descriptor as well. `hint` is the size
    expected (a small file is then read without a chunk-sized buffer)."""
    import hashlib

    digest = hashlib.sha256()
    size = 0
    want = min(_CHUNK, max(hint, 0) + 1)
    while chunk := os.read(source, want):
        if len(chunk) == want:
            want = _CHUNK
        digest.update(chunk)
        size += len(chunk)
        if copy is not None:
            write_all(copy, chunk)
        if also is not None:
            write_all(also, chunk)
    return size, digest.hexdigest()


def remove(fd: int, name: str) -> str | None:
    """Remove whatever is at `name` in the folder `fd` (a folder with all it holds; a link,
    never what it points to) and say what it was (`a regular file`, `a symlink to
    '/etc/passwd'`, `a FIFO`, ...); None when nothing was there."""
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    found = describe(name, fd)
    if stat.S_ISDIR(info.st_mode):
        import shutil

        shutil.rmtree(name, dir_fd=fd)
    else:
        os.unlink(name, dir_fd=fd)
    return found


def is_regular(fd: int, name: str) -> bool | None:
    """Whether `name` in the folder `fd` is a regular file (None: nothing is there)."""
    try:
        return stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return None


def write_new(fd: int, name: str, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to a new file `name` in the folder `fd`; FileExistsError when anything is
    there (never written through: a link, a FIFO, another file's hard link)."""
    out = os.open(name, _NEW, mode, dir_fd=fd)
    try:
        write_all(out, data)
    finally:
        os.close(out)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to the descriptor `fd` (os.write may take fewer)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def descend(fd: int, folders: list[str], make: bool = False) -> int:
    """A new descriptor of the folder `folders` below the folder `fd`, each entered without
    following a link (with `make`, a missing one is made); the caller closes it."""
    here = os.dup(fd)
    try:
        for folder in folders:
            if make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder, 0o755, dir_fd=here)
            inner = open_dir(folder, here)
            os.close(here)
            here = inner
    except BaseException:
        os.close(here)
        raise
    return here


class Folders:
    """Descriptors of the folders below one folder, each opened once (without following a
    link) however many files are placed in it: for copying or removing many files."""

    def __init__(self, fd: int, make: bool = False):
        self.root = fd
        self.make = make
        self.open: dict[str, int] = {}

    def at(self, rel: str) -> tuple[int, str]:
        """(descriptor of the folder holding `rel`, its last name)."""
        folder, _, name = rel.rpartition("/")
        if not folder:
            return self.root, name
        found = self.open.get(folder)
        if found is None:
            parent, last = self.at(folder)
            if self.make:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(last, 0o755, dir_fd=parent)
            found = self.open[folder] = open_dir(last, parent)
        return found, name

    def close(self) -> None:
        for fd in self.open.values():
            os.close(fd)
        self.open.clear()
