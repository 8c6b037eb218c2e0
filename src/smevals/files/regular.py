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

from smevals.errors import SmevalsError

_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
          | getattr(os, "O_CLOEXEC", 0))


REGULAR = "a regular file"
RECORD_LIMIT_SETTING = "SMEVALS_MAX_RECORD_MB"
RECORD_LIMIT_MB = 16


class NotRegular(OSError):
    """The path exists but is not a regular file (the message says what it is)."""


class TooLarge(NotRegular):
    """A record file above the size limit, refused before it is read (the message says the
    size, the limit and the setting that raises it)."""


USAGE_LIMIT_SETTING = "SMEVALS_MAX_USAGE_MB"
USAGE_LIMIT_MB = 1


def usage_limit() -> int:
    """Bytes a runner's usage file may hold: `SMEVALS_MAX_USAGE_MB` megabytes, 1 unless set."""
    return megabytes(USAGE_LIMIT_SETTING, USAGE_LIMIT_MB)


def record_limit() -> int:
    """Bytes a record file (run.json, grade.json, a judge-cache entry) may hold:
    `SMEVALS_MAX_RECORD_MB` megabytes, 16 unless set."""
    return megabytes(RECORD_LIMIT_SETTING, RECORD_LIMIT_MB)


def megabytes(setting: str, default: int) -> int:
    """A size limit in bytes from the environment variable `setting` (whole or decimal
    megabytes, above 0), else `default` MB. A malformed value is a usage error, said once."""
    text = os.environ.get(setting, "").strip()
    if not text:
        return default << 20
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (0 < value < 1 << 40):
        raise SmevalsError(f"{setting}: '{text}' is not a size in megabytes (a number above 0)")
    return int(value * (1 << 20))


def over_limit(size: int, limit: int, what: str, setting: str) -> str:
    """The words for a file refused for its size."""
    return (f"{size} bytes, above the {limit / (1 << 20):g} MB limit of {what} "
            f"({setting} raises it)")


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


def read_record(path: str) -> tuple[os.stat_result, bytes]:
    """(fstat, bytes) of a record file of at most `record_limit()` bytes (read_capped)."""
    return read_capped(path, record_limit(), "a record", RECORD_LIMIT_SETTING)


def read_capped(path: str, limit: int, what: str, setting: str,
                dir_fd: int | None = None) -> tuple[os.stat_result, bytes]:
    """(fstat, bytes) of a regular file of at most `limit` bytes, checked on the open handle
    before a byte is read (and while reading, should it grow); raises TooLarge above it,
    naming `what` is limited and the `setting` that raises the limit."""
    fd, info = open_regular(path, dir_fd)
    try:
        data = b"" if info.st_size > limit else _read_upto(fd, limit + 1)
    finally:
        os.close(fd)
    if info.st_size > limit or len(data) > limit:
        raise TooLarge(over_limit(max(info.st_size, len(data)), limit, what, setting))
    return info, data


def _read_upto(fd: int, most: int) -> bytes:
    parts = []
    while most > 0 and (chunk := os.read(fd, min(most, 1 << 20))):
        parts.append(chunk)
        most -= len(chunk)
    return b"".join(parts)


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
