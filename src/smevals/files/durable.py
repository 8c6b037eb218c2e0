"""Making written objects durable with few waits on the disk.

Two tricks, each measured in docs/performance.md ("Overhead per Run and per Grade"):

- **One flush per object, not one per file.** The files and folders of a staged object
  are fsynced at once, from a few threads, instead of one after the other. The file
  system (ext4's journal, xfs' log) folds fsyncs that wait together into one commit. All
  of them still end before the object is renamed into place.
- **The folders an object is renamed into are fsynced once per batch.** The rename makes
  an object visible; fsyncing the folder it lands in (and the folders made for it) only
  makes that rename survive a power loss. Until it does, a crash can lose the finished
  object, never show part of one: the rename is atomic and everything inside the object
  was already on disk. The object is then still a staging leftover (`verify` lists it,
  `gc` removes it, `run -n` makes it again). Such folders are fsynced together when 256 are
  waiting, when the oldest has waited two seconds (looked at on every commit), when a
  command's writes end (`sync_pending`, called by `run` and `grade`) and at exit. So what
  a finished command reported is on disk, as before.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import stat
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING

from smevals.phases import phase

if TYPE_CHECKING:       # imported where used: a read-only command never needs it
    from concurrent.futures import ThreadPoolExecutor

_THREADS = 2
MAX_PENDING = 256           # folders waiting for their fsync
MAX_AGE = 2.0               # seconds the oldest may wait

_lock = threading.Lock()
_pool: dict[int, ThreadPoolExecutor] = {}      # pid -> pool (a forked child makes its own)
_pending: dict[str, None] = {}                 # folder paths, in the order they came
_since = [0.0]                                 # when the oldest pending folder came
_hooked = [False]
_exiting = threading.Event()


def fsync_paths(paths: Iterable[str], missing_ok: bool = False) -> None:
    """fsync every path at once (regular files and folders; anything else is skipped).
    Raises the first OSError, after every fsync has ended."""
    first, *rest = list(paths) or [""]
    pool = _executor() if rest else None
    try:
        futures = [] if pool is None else [pool.submit(_fsync, p, missing_ok) for p in rest]
    except RuntimeError:                 # the interpreter is shutting down: no new threads
        futures = []
    errors: list[BaseException] = []
    for path in [first, *(rest if not futures else [])]:
        if path:
            try:
                _fsync(path, missing_ok)     # this thread does one while the others run
            except OSError as error:
                errors.append(error)
    errors += [err for f in futures if (err := f.exception()) is not None]
    if errors:
        raise errors[0]


def fsync_tree(folder: str) -> None:
    """fsync every folder and regular file below `folder` (itself included), at once."""
    fsync_paths(tree(folder))


def defer_fsync(folder: str) -> None:
    """Note that `folder` gained an entry whose survival matters; fsynced with the batch."""
    with _lock:
        if not _pending:
            _since[0] = time.monotonic()
        _pending[folder] = None
        due = len(_pending) >= MAX_PENDING or time.monotonic() - _since[0] >= MAX_AGE
        if not _hooked[0]:
            atexit.register(_sync_at_exit)
            _hooked[0] = True
    if due:
        sync_pending()


def sync_pending() -> None:
    """fsync every folder noted by `defer_fsync` and not yet synced."""
    with _lock:
        folders = list(_pending)
        _pending.clear()
    try:
        with phase("folders fsync (batched)"):
            fsync_paths(folders, missing_ok=True)      # a folder removed since needs nothing
    except OSError:
        with _lock:                      # keep them for the next try (or exit)
            _pending.update(dict.fromkeys(folders))
        raise


def _sync_at_exit() -> None:
    _exiting.set()
    with contextlib.suppress(OSError):      # the command has reported its own errors
        sync_pending()


def _executor() -> ThreadPoolExecutor | None:
    """The fsync threads of this process; None once the interpreter is shutting down (the
    threads are gone before `atexit` runs): the caller then fsyncs one path at a time."""
    if _exiting.is_set():
        return None
    pid = os.getpid()
    with _lock:
        pool = _pool.get(pid)
        if pool is None:
            from concurrent.futures import ThreadPoolExecutor

            _pool.clear()
            pool = _pool[pid] = ThreadPoolExecutor(_THREADS, thread_name_prefix="smevals-fsync")
        return pool


def tree(folder: str) -> list[str]:
    """`folder` and every folder and regular file below it (what `fsync_tree` syncs)."""
    out = [folder]
    with os.scandir(folder) as it:
        for entry in it:
            if entry.is_dir(follow_symlinks=False):
                out.extend(tree(entry.path))
            elif entry.is_file(follow_symlinks=False):
                out.append(entry.path)
    return out


def _fsync(path: str, missing_ok: bool) -> None:
    with phase("fsync (each path)"):
        _fsync_one(path, missing_ok)


def _fsync_one(path: str, missing_ok: bool) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        if missing_ok:
            return
        raise
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
            os.fsync(fd)
    finally:
        os.close(fd)
