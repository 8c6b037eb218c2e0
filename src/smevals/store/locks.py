"""Advisory locks (flock), the one place that takes them: on staging folders, claim buckets
(store/claims.py) and judge cache writes (store/judgecache.py). A lock is held by the
writing process and released by the kernel when that process ends (even by SIGKILL), so a
leftover is told from a live write."""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:                      # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

AVAILABLE = fcntl is not None            # False where there are no advisory locks


def hold(fd: int) -> None:
    """Take the exclusive lock on the open file `fd`, waiting for it (OSError when the file
    system refuses; nothing where locks are not available)."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_EX)


def try_hold(fd: int) -> bool | None:
    """Take the exclusive lock on the open file `fd` if nobody holds it: True when taken,
    False when another process holds it, None when that cannot be told."""
    if fcntl is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return None
    return True


def lock_folder(folder: Path) -> int | None:
    """Hold an exclusive lock on `folder` (a fresh one: others only probe it for a moment);
    the returned handle is given to `unlock`."""
    if not AVAILABLE:
        return None
    fd = os.open(folder, os.O_RDONLY)
    try:
        hold(fd)
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
    if not AVAILABLE:
        return None, None
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return None, None
    got = try_hold(fd)
    if got:
        return fd, False
    os.close(fd)
    return None, None if got is None else True
