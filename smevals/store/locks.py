"""Advisory locks on staging folders: held by the writing process, released by the kernel
when that process ends (even by SIGKILL), so a leftover is told from a live write."""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:                      # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]


def lock_folder(folder: Path) -> int | None:
    """Hold an exclusive lock on `folder` (a fresh one: others only probe it for a moment);
    the returned handle is given to `unlock`."""
    if fcntl is None:
        return None
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        os.close(fd)
        return None
    return fd


def unlock(handle: int) -> None:
    os.close(handle)


def try_lock(folder: Path) -> int | None:
    """The folder's lock if nobody holds it, else None."""
    return _probe(folder)[0]


def is_locked(folder: Path) -> bool | None:
    """Whether a live process holds `folder`'s lock (None when that cannot be told)."""
    handle, held = _probe(folder)
    if handle is not None:
        unlock(handle)
    return held


def _probe(folder: Path) -> tuple[int | None, bool | None]:
    """(our lock handle when we got it, whether another process holds it or None if unknown)."""
    if fcntl is None:
        return None, None
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return None, None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None, True
    except OSError:
        os.close(fd)
        return None, None
    return fd, False
