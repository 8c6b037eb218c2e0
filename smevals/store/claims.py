"""Claims on work that two processes must not both do (a cell's Runs, a Run's Grade).

A claim is an flock on a file in `<store>/.staging/.claims/` (ignored by git and by `gc`),
so the kernel drops it when its holder ends, even by SIGKILL: no claim outlives a process.
Keys are spread over a fixed number of lock files (a hash picks one), so the folder never
grows; two keys sharing a file only wait for each other a little.

Inside one process, threads holding keys of the same file share its lock (a count of
holders); the file is unlocked when the last one lets go. A thread waits for a lock only
while it holds none, so two processes can never wait for each other in a cycle.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from smevals.store.layout import STAGING

try:
    import fcntl
except ImportError:                      # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

CLAIMS = ".claims"
BUCKETS = 256
POLL = 0.05                              # seconds between tries while another holds a lock


class Claims:
    """Claims of one kind of work (`prefix`) in the store at `root`."""

    def __init__(self, root: Path, prefix: str):
        self.folder = root / STAGING / CLAIMS
        self.prefix = prefix
        self._guard = threading.Lock()
        self._held: dict[int, list[int]] = {}           # bucket -> [fd, holders]
        self._waits: dict[int, threading.Lock] = {}

    @contextlib.contextmanager
    def hold(self, key: str, cancelled: Callable[[], bool] = lambda: False) -> Iterator[bool]:
        """Hold the claim on `key` for the block; yields False when `cancelled` turned true
        while waiting (the block must then do nothing)."""
        bucket = int(hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:8],
                     16) % BUCKETS
        got = self._enter(bucket, cancelled)
        try:
            yield got
        finally:
            if got:
                self._leave(bucket)

    def _enter(self, bucket: int, cancelled: Callable[[], bool]) -> bool:
        with self._guard:
            wait = self._waits.setdefault(bucket, threading.Lock())
        with wait:
            with self._guard:
                if bucket in self._held:
                    self._held[bucket][1] += 1
                    return True
            fd = self._lock(bucket, cancelled)
            if fd is None:
                return False
            with self._guard:
                self._held[bucket] = [fd, 1]
            return True

    def _leave(self, bucket: int) -> None:
        with self._guard:
            state = self._held[bucket]
            state[1] -= 1
            if state[1]:
                return
            del self._held[bucket]
        if state[0] >= 0:
            os.close(state[0])

    def _lock(self, bucket: int, cancelled: Callable[[], bool]) -> int | None:
        """An fd holding the bucket's lock (-1 where locks are not available), or None when
        cancelled while waiting."""
        if fcntl is None:
            return -1
        fd = self._open(bucket)
        if fd < 0:
            return -1
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if cancelled():
                    os.close(fd)
                    return None
                time.sleep(POLL)
            except OSError:
                os.close(fd)
                return -1

    def _open(self, bucket: int) -> int:
        path = self.folder / f"{self.prefix}-{bucket:03d}.lock"
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except FileNotFoundError:
            pass
        except OSError:
            return -1
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _ignored(self.folder.parent)
            return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError:
            return -1                    # cannot lock (read-only store): go on unclaimed


_ALL: dict[tuple[str, str], Claims] = {}
_ALL_GUARD = threading.Lock()


def claims_for(root: Path, prefix: str) -> Claims:
    """The one Claims of `prefix` for the store at `root` in this process (two would lock
    each other out: flock knows open files, not processes)."""
    key = (os.path.realpath(root), prefix)
    with _ALL_GUARD:
        if key not in _ALL:
            _ALL[key] = Claims(root, prefix)
        return _ALL[key]


def _ignored(staging: Path) -> None:
    from smevals.store.objects import _ignore_in_git

    _ignore_in_git(staging)
