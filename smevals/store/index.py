"""Reading every record of a working-tree store quickly, through the cache, never stale.

Each read lists the object folders and stats every record file (`scan.listing`). When the
listing is byte for byte the one saved with the cache, every cached record is still valid;
otherwise only the records whose stamp changed are read again. A record changed within
RACY_NS of a listing is not trusted by the next read either (git's "racy clean" rule): a
second change in the same clock tick could leave its stamp as it was.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from smevals.store import cache, scan, walk
from smevals.store.canonical import loads
from smevals.store.layout import DEPTH, RECORD_NAMES

RACY_NS = 2_000_000_000
READ_CHUNK = 256
READ_AHEAD = 16             # helpers reading ahead on a cold disk
SLOW_READ = 60e-6           # seconds per file above which the disk is taken as cold


FREEZE_AFTER = 100_000      # new container objects that make a pause end in gc.freeze()


@contextmanager
def gc_paused() -> Iterator[None]:
    """Build many small containers without the cyclic GC walking them again and again.

    Records hold no reference cycles. After a big load everything alive is moved to the GC's
    permanent generation (`gc.freeze`), so the collector does not walk the loaded records
    over and over in the rest of the run; reference counting still frees them as usual."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_count()[0] > FREEZE_AFTER:
            gc.freeze()
        if was:
            gc.enable()


def read_kind(root: Path, kind: str) -> cache.Index:
    """(rels, ids, records) of every object of `kind`; a record that cannot be read or
    parsed is given as a str saying why."""
    with gc_paused():
        racy_ns = time.time_ns() - RACY_NS
        child = _child(root, kind, racy_ns)
        old = cache.load(root, kind)
        if old is None:
            if child:
                child.cancel()
            fresh = _first_read(root, kind, racy_ns)
            cache.save(root, kind, fresh)
            return fresh
        listing = child.result() if child else None
        if listing is None:
            listing = scan.listing(str(root), kind, DEPTH[kind], RECORD_NAMES[kind],
                                   cache.dirs_path(root, kind), racy_ns)
        if old.trusted and old.listing == listing:
            return old
        fresh = _refresh(root, kind, listing, old, racy_ns)
        cache.save(root, kind, fresh)
        return fresh


def _child(root: Path, kind: str, racy_ns: int) -> scan.Child | None:
    """A child process to list a big store while this one loads its cache."""
    if not cache.enabled() or cache.size(root, kind) < scan.CHILD_MIN_BYTES:
        return None
    try:
        return scan.Child(os.path.abspath(root), kind, DEPTH[kind], RECORD_NAMES[kind],
                          cache.dirs_path(root, kind), racy_ns)
    except OSError:
        return None


def _first_read(root: Path, kind: str, racy_ns: int) -> cache.Index:
    """Read every record with no cache to help: each file is stamped by fstat on the handle
    it is read through, so stamp and bytes always belong together."""
    groups, snapshot = walk.object_groups(str(root), kind, DEPTH[kind], None, racy_ns,
                                          parallel=True)
    if cache.dirs_path(root, kind):
        walk.save(cache.dirs_path(root, kind), snapshot)
    rels = [f"{parent}/{name}" for parent, names in groups for name in names]
    name = RECORD_NAMES[kind]
    found = read_files([os.path.join(root, rel, name) for rel in rels])
    stamps = [stamp for stamp, _data in found]
    memo: dict[str, str] = {}
    records = [share_strings(parse_record(kind, data), memo) for _stamp, data in found]
    return _index(rels, stamps, records, racy_ns)


def _index(rels: list[str], stamps: list[str], records: list[Any], racy_ns: int) -> cache.Index:
    untrusted = [rel for rel, stamp in zip(rels, stamps, strict=True)
                 if scan.changed_since(stamp, racy_ns)]
    ids = [rel[rel.rfind("/") + 1:] for rel in rels]
    return cache.Index(scan.join(rels, stamps), untrusted, rels, ids, records)


def _refresh(root: Path, kind: str, listing: bytes, old: cache.Index | None,
             racy_ns: int) -> cache.Index:
    rels, stamps = scan.parse(listing)
    known: dict[str, tuple[str, Any]] = {}
    if old is not None:
        old_rels, old_stamps = scan.parse(old.listing)
        doubtful = set(old.untrusted)
        known = {rel: (stamp, record) for rel, stamp, record
                 in zip(old_rels, old_stamps, old.records, strict=True) if rel not in doubtful}
    records: list[Any] = [None] * len(rels)
    todo: list[int] = []
    for i, (rel, stamp) in enumerate(zip(rels, stamps, strict=True)):
        hit = known.get(rel)
        if hit is not None and hit[0] == stamp and stamp != scan.MISSING:
            records[i] = hit[1]
        else:
            todo.append(i)
    name = RECORD_NAMES[kind]
    found = read_files([os.path.join(root, rels[i], name) for i in todo])
    memo: dict[str, str] = {}
    for i, (stamp, data) in zip(todo, found, strict=True):
        records[i] = share_strings(parse_record(kind, data), memo)
        stamps[i] = stamp
    return _index(rels, stamps, records, racy_ns)


def read_files(paths: list[str]) -> list[tuple[str, bytes | None]]:
    """(stamp, bytes) of every file (scan.MISSING and None for one that cannot be read).

    Files are read one after another: from the page cache that is quickest. When they come
    slowly (a cold disk), helpers read the rest ahead, so the disk gets many reads at once."""
    out: list[tuple[str, bytes | None]] = []
    slow = 0
    for start in range(0, len(paths), READ_CHUNK):
        chunk = paths[start:start + READ_CHUNK]
        began = time.perf_counter()
        out += _read_all(chunk)
        slow = slow + 1 if time.perf_counter() - began > SLOW_READ * len(chunk) else 0
        rest = paths[start + READ_CHUNK:]
        if slow >= 2 and len(rest) > 4 * READ_CHUNK:
            return out + _read_ahead(rest)
    return out


def _read_ahead(paths: list[str]) -> list[tuple[str, bytes | None]]:
    """Read `paths` here while forked helpers read them ahead into the page cache (threads
    when this process has other threads and must not fork)."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        chunks = [paths[i:i + READ_CHUNK] for i in range(0, len(paths), READ_CHUNK)]
        with ThreadPoolExecutor(max_workers=READ_AHEAD) as pool:
            return [found for part in pool.map(_read_all, chunks) for found in part]
    helpers = []
    for k in range(READ_AHEAD):
        pid = os.fork()
        if pid == 0:                                  # a helper: read, drop, leave
            try:
                _read_all(paths[k::READ_AHEAD])
            finally:
                os._exit(0)
        helpers.append(pid)
    try:
        return _read_all(paths)
    finally:
        for pid in helpers:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)


def _read_all(paths: list[str]) -> list[tuple[str, bytes | None]]:
    return [_read(p) for p in paths]


def _read(path: str) -> tuple[str, bytes | None]:
    try:
        with open(path, "rb", buffering=0) as handle:
            return scan.stamp(os.fstat(handle.fileno())), handle.readall()
    except OSError:
        return scan.MISSING, None


def share_strings(value: Any, memo: dict[str, str]) -> Any:
    """Make equal strings inside freshly parsed records one object (in place). Strings are
    immutable, so nothing can tell, except marshal: it then stores each string once, and
    the cache decodes about a quarter faster."""
    if type(value) is dict:
        for key, item in value.items():
            kind = type(item)
            if kind is str:
                value[key] = memo.setdefault(item, item)
            elif kind is dict or kind is list:
                share_strings(item, memo)
    elif type(value) is list:
        for i, item in enumerate(value):
            kind = type(item)
            if kind is str:
                value[i] = memo.setdefault(item, item)
            elif kind is dict or kind is list:
                share_strings(item, memo)
    return value


def parse_record(kind: str, data: bytes | None) -> dict[str, Any] | str:
    """The record, or why it cannot be used."""
    name = RECORD_NAMES[kind]
    if data is None:
        return f"{name} is missing"
    try:
        record = loads(data)
    except ValueError as exc:
        return f"unreadable {name}: {exc}"
    if not isinstance(record, dict):
        return f"unreadable {name}: not a JSON object"
    return record
