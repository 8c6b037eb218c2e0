"""Claims on work that two processes must not both do (a cell's Runs, a Run's Grade).

A claim is an flock on a file in `<store>/.staging/.claims/` (ignored by git and by `gc`),
so the kernel drops it when its holder ends, even by SIGKILL: no claim outlives a process.
Keys are spread over a fixed number of lock files (a hash picks one), so the folder never
grows; two keys sharing a file only wait for each other a little.

A lock file is removed when its claim is released, so a clean run leaves none behind (one
killed while holding a claim leaves its file, reused by the next run). Removing a file that
another process may be about to lock needs care: the holder unlinks the file while it
still holds the lock, and closes it after; whoever gets a lock checks that the file it
locked is still the one at that path (same device and inode) and starts again otherwise.
So a process that opened the file just before it was removed, and locks it just after,
notices that it locked an orphan and locks the path's new file instead: two processes can
never both believe they hold the same claim.

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

from smevals import caches
from smevals.store import locks
from smevals.store.folders import open_folder
from smevals.store.layout import STAGING

CLAIMS = ".claims"
_LOCK_FLAGS = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
               | getattr(os, "O_CLOEXEC", 0))
BUCKETS = 256
POLL = 0.05                              # seconds between tries while another holds a lock
VANISHED = 1000                          # locked files found removed before giving up


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
        got = self.take(key, cancelled)
        try:
            yield got
        finally:
            if got:
                self.give_back(key)

    def take(self, key: str, cancelled: Callable[[], bool] = lambda: False) -> bool:
        """Take the claim on `key` (False when `cancelled` turned true while waiting): held
        until `give_back(key)`, which any thread of the process may call (a Grade's claim is
        given back once the Grade is placed, store/batch.py)."""
        return self._enter(_bucket(key), cancelled)

    def give_back(self, key: str) -> None:
        self._leave(_bucket(key))

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
            with contextlib.suppress(OSError):      # still locked: see the module
                os.unlink(self._path(bucket))
            os.close(state[0])

    def _lock(self, bucket: int, cancelled: Callable[[], bool]) -> int | None:
        """An fd holding the bucket's lock (-1 where locks are not available), or None when
        cancelled while waiting."""
        if not locks.AVAILABLE:
            return -1
        vanished = 0
        while vanished < VANISHED:
            fd = self._open(bucket)
            if fd < 0:
                return -1
            got = locks.try_hold(fd)
            if got is False:
                os.close(fd)
                if cancelled():
                    return None
                time.sleep(POLL)
                continue
            if got is None:
                os.close(fd)
                return -1
            if self._current(fd, bucket):
                return fd
            os.close(fd)                 # locked a file its holder removed: start again
            vanished += 1
        return -1                        # the file keeps vanishing: go on unclaimed

    def _current(self, fd: int, bucket: int) -> bool:
        """Whether the locked `fd` is still the bucket's lock file (see the module)."""
        try:
            mine, now = os.fstat(fd), os.stat(self._path(bucket))
        except OSError:
            return False
        return (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)

    def _path(self, bucket: int) -> Path:
        return self.folder / f"{self.prefix}-{bucket:03d}.lock"

    def _open(self, bucket: int) -> int:
        """The bucket's lock file, opened (made) in the claims folder, which is entered
        without following a link (a linked `.staging` is refused: store.folders)."""
        try:
            folder = open_folder(self.folder.parent.parent, f"{STAGING}/{CLAIMS}")
        except OSError:
            return -1                    # cannot lock (read-only store): go on unclaimed
        try:
            _ignored(self.folder.parent)
            return os.open(self._path(bucket).name, _LOCK_FLAGS, 0o644, dir_fd=folder)
        except OSError:
            return -1
        finally:
            os.close(folder)


def _bucket(key: str) -> int:
    return int(hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:8],
               16) % BUCKETS


_ALL: dict[tuple[str, str], Claims] = {}
caches.register(__name__, "_ALL")
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
    from smevals.store.write import ignore_in_git

    ignore_in_git(staging)
