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


def open_regular(path: str) -> tuple[int, os.stat_result]:
    """(fd, fstat) of a regular file; raises NotRegular for anything else, OSError when it
    cannot be opened."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegular("a symlink, not a regular file") from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise NotRegular(f"{what(info.st_mode)}, not a regular file")
    return fd, info


def read_regular(path: str) -> tuple[os.stat_result, bytes]:
    """(fstat, bytes) of a regular file (see open_regular)."""
    fd, info = open_regular(path)
    try:
        with os.fdopen(fd, "rb", buffering=0) as handle:
            fd = -1
            return info, handle.readall()
    finally:
        if fd >= 0:
            os.close(fd)
