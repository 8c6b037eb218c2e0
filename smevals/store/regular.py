"""Opening a record file only when it is a regular file, so that nothing ever blocks on one.

A FIFO (or a device, a socket, a symlink) where `run.json` or `grade.json` belongs would hang
a plain `open()` or make it read forever. Records are opened without following a symlink and
without blocking (O_NONBLOCK opens a FIFO at once and means nothing for a regular file), then
checked with fstat: anything but a regular file is damage, said in words.
"""

from __future__ import annotations

import errno
import os
import stat

_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
          | getattr(os, "O_CLOEXEC", 0))


REGULAR = "a regular file"


class NotRegular(OSError):
    """The path exists but is not a regular file (the message says what it is)."""


def what(mode: int) -> str:
    """A word for a file type that is not a regular file."""
    for test, word in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISDIR, "a folder"), (stat.S_ISLNK, "a symlink")):
        if test(mode):
            return word
    return "not a regular file"


def describe(name: str, dir_fd: int | None = None) -> str:
    """What is at `name` (relative to `dir_fd` when given), in words, never following it:
    `a symlink to '/etc/passwd'`, `a FIFO`, `a folder`, `a regular file`, ..."""
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return "nothing that can be looked at"
    if stat.S_ISLNK(info.st_mode):
        try:
            return f"a symlink to {os.readlink(name, dir_fd=dir_fd)!r}"
        except OSError:
            return "a symlink"
    return REGULAR if stat.S_ISREG(info.st_mode) else what(info.st_mode)


def open_regular(path: str, dir_fd: int | None = None) -> tuple[int, os.stat_result]:
    """(fd, fstat) of a regular file (`path` relative to `dir_fd` when given); raises
    NotRegular for anything else, OSError when it cannot be opened."""
    try:
        fd = os.open(path, _FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegular("a symlink, not a regular file") from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise NotRegular(f"{what(info.st_mode)}, not a regular file")
    return fd, info


def read_regular(path: str, dir_fd: int | None = None) -> tuple[os.stat_result, bytes]:
    """(fstat, bytes) of a regular file (see open_regular)."""
    fd, info = open_regular(path, dir_fd)
    try:
        with os.fdopen(fd, "rb", buffering=0) as handle:
            fd = -1
            return info, handle.readall()
    finally:
        if fd >= 0:
            os.close(fd)


def read_text(path: str) -> str:
    """A regular file's text as `open(path).read()` gives it (UTF-8, undecodable bytes
    replaced, universal newlines), never following a symlink or blocking on a FIFO: raises
    NotRegular for anything but a regular file."""
    text = read_regular(path)[1].decode("utf-8", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
