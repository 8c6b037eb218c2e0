"""Reading every record of a working-tree store quickly, through the cache, never stale.

Each read lists the object folders and stats every record file (`scan.listing`). When the
listing is byte for byte the one saved with the cache, every cached record is still valid;
otherwise only the records whose stamp changed are read again. A record changed within
RACY_NS of a listing is not trusted by the next read either (git's "racy clean" rule): a
second change in the same clock tick could leave its stamp as it was.

Records are cached in full or in the brief view (store/brief.py), each with its git blob
id (for gitindex.py). For a big store the listing is made by a child process; `prefetch`
starts it early, and `read_kind(..., early=True)` hands out the cached index before the
listing is done, to be checked later by `confirm`.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import hashlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from smevals.store import cache, damage, scan, walk
from smevals.store.brief import VERSION as BRIEF_VERSION
from smevals.store.brief import brief as brief_view
from smevals.store.brief import share_strings
from smevals.store.canonical import loads
from smevals.store.halves import in_halves
from smevals.store.layout import DEPTH, KINDS, RECORD_NAMES
from smevals.store.regular import NotRegular, read_regular

RACY_NS = 2_000_000_000
READ_CHUNK = 256
READ_AHEAD = 16             # helpers reading ahead on a cold disk
SPLIT_MIN = 20_000          # records to parse that make it worth forking a helper
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


def read_kind(root: Path, kind: str, brief: bool = False, early: bool = False) -> cache.Index:
    """(rels, ids, records) of every object of `kind`; a record that cannot be read or
    parsed is given as a str saying why. With `brief`, records are in the brief view
    (`smevals.store.brief`), cached apart from the full ones.

    With `early`, and a listing of `root` under way (`prefetch`), the cached index is given
    at once, unchecked: the caller must then ask `confirm(root)` before it trusts what it
    made of it."""
    name = label(kind, brief)
    with gc_paused():
        ahead = _AHEAD.get(os.path.realpath(root))
        racy_ns = ahead.racy_ns if ahead else time.time_ns() - RACY_NS
        child = None if ahead else _child(root, [kind], racy_ns, cache.size(root, name))
        old = cache.load(root, name)
        if old is None:
            if child:
                child.cancel()
            fresh = _first_read(root, kind, racy_ns, brief)
            cache.save(root, name, fresh)
            return fresh
        if early and ahead and old.trusted:
            _UNCONFIRMED[(os.path.realpath(root), name)] = (kind, old, brief)
            return old
        found = ahead.take(kind) if ahead else _result(child)
        return _settle(root, kind, old, found, racy_ns, brief)


def confirm(root: Path) -> bool:
    """Whether every index `read_kind` gave early for `root` is still what is on disk
    (this waits for the listing). Those that are not are brought up to date in the cache,
    so reading again gives the current records."""
    real = os.path.realpath(root)
    ahead = _AHEAD.pop(real, None)              # done with: later reads list afresh
    ok = True
    for key in [key for key in _UNCONFIRMED if key[0] == real]:
        kind, old, brief = _UNCONFIRMED.pop(key)
        found = ahead.take(kind) if ahead else None
        with gc_paused():
            ok = _settle(root, kind, old, found, ahead.racy_ns if ahead else 0, brief) is old \
                and ok
    if ahead is not None:
        ahead.cancel()
    return ok


def _settle(root: Path, kind: str, old: cache.Index, listing: bytes | None, racy_ns: int,
            brief: bool) -> cache.Index:
    """`old` when `listing` (made here when None) is the one it was made from, else the
    index brought up to date (and saved)."""
    if listing is None:
        racy_ns = racy_ns or time.time_ns() - RACY_NS
        listing = scan.listing(str(root), kind, DEPTH[kind], RECORD_NAMES[kind],
                               cache.dirs_path(root, kind), racy_ns)
    if old.trusted and old.listing == listing:
        return old
    fresh = _refresh(root, kind, listing, old, racy_ns, brief)
    cache.save(root, label(kind, brief), fresh)
    return fresh


def label(kind: str, brief: bool) -> str:
    """The cache file's name part: the kind, and for brief records the brief view's version."""
    return f"{kind}-brief{BRIEF_VERSION}" if brief else kind


_AHEAD: dict[str, scan.Ahead] = {}
_UNCONFIRMED: dict[tuple[str, str], tuple[str, cache.Index, bool]] = {}


def prefetch(root: Path) -> None:
    """Start listing a big store's Runs and Grades in a child process now, so that the
    listings are ready (or nearly) when `read_kind` needs them: call it before other slow
    work, such as loading the Eval's files. A child nobody waits for is stopped at exit."""
    real = os.path.realpath(root)
    if real in _AHEAD:
        return
    racy_ns = time.time_ns() - RACY_NS
    biggest = max(cache.size(root, label(kind, brief)) for kind in KINDS
                  for brief in (False, True))
    child = _child(root, list(KINDS), racy_ns, biggest)
    if child:
        if not _AHEAD:
            atexit.register(_cancel_ahead)
        _AHEAD[real] = scan.Ahead(child, list(KINDS), racy_ns)


def _cancel_ahead() -> None:
    while _AHEAD:
        _real, ahead = _AHEAD.popitem()
        ahead.cancel()


def _child(root: Path, kinds: list[str], racy_ns: int, size: int) -> scan.Child | None:
    """A child process to list a big store (its cache file `size` bytes) while this one
    loads the cache."""
    if not cache.enabled() or size < scan.CHILD_MIN_BYTES:
        return None
    jobs = [(kind, DEPTH[kind], RECORD_NAMES[kind], cache.dirs_path(root, kind))
            for kind in kinds]
    try:
        return scan.Child(os.path.abspath(root), jobs, racy_ns)
    except OSError:
        return None


def _result(child: scan.Child | None) -> bytes | None:
    found = child.result() if child else None
    return found[0] if found else None


def _first_read(root: Path, kind: str, racy_ns: int, brief: bool) -> cache.Index:
    """Read every record with no cache to help: each file is stamped by fstat on the handle
    it is read through, so stamp and bytes always belong together."""
    groups, snapshot = walk.object_groups(str(root), kind, DEPTH[kind], None, racy_ns,
                                          parallel=True)
    if cache.dirs_path(root, kind):
        walk.save(cache.dirs_path(root, kind), snapshot)
    rels = [f"{parent}/{name}" for parent, names in groups for name in names]
    name = RECORD_NAMES[kind]
    found = _load([os.path.join(root, rel, name) for rel in rels], kind, brief)
    return _index(rels, [f[0] for f in found], [f[1] for f in found], [f[2] for f in found],
                  racy_ns)


def _load(paths: list[str], kind: str, brief: bool) -> list[tuple[str, Any, str]]:
    """(stamp, parsed record, blob id) of every file; many are parsed on two cores."""
    def work(part: list[str]) -> list[tuple[str, Any, str]]:
        memo: dict[str, str] = {}
        return [(stamp, parse_record(kind, data, brief, memo, object_of(path)), blob_id(data))
                for path, (stamp, data) in zip(part, read_files(part), strict=True)]

    return in_halves(paths, work, SPLIT_MIN)


def _index(rels: list[str], stamps: list[str], records: list[Any], blobs: list[str],
           racy_ns: int) -> cache.Index:
    untrusted = [rel for rel, stamp in zip(rels, stamps, strict=True)
                 if scan.changed_since(stamp, racy_ns)]
    ids = [rel[rel.rfind("/") + 1:] for rel in rels]
    return cache.Index(scan.join(rels, stamps), untrusted, rels, ids, records, blobs)


def blob_id(data: bytes | str | None) -> str:
    """The id git gives a file with these bytes (its sha1 object name), "" for None: records
    read here are reused when a git revision holds the same blob (gitindex.py)."""
    if not isinstance(data, bytes):
        return ""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _refresh(root: Path, kind: str, listing: bytes, old: cache.Index | None,
             racy_ns: int, brief: bool) -> cache.Index:
    rels, stamps = scan.parse(listing)
    known: dict[str, tuple[str, Any, str]] = {}
    if old is not None:
        old_rels, old_stamps = scan.parse(old.listing)
        doubtful = set(old.untrusted)
        known = {rel: (stamp, record, blob) for rel, stamp, record, blob
                 in zip(old_rels, old_stamps, old.records, old.blobs, strict=True)
                 if rel not in doubtful}
    records: list[Any] = [None] * len(rels)
    blobs = [""] * len(rels)
    todo: list[int] = []
    for i, (rel, stamp) in enumerate(zip(rels, stamps, strict=True)):
        hit = known.get(rel)
        if hit is not None and hit[0] == stamp and stamp != scan.MISSING:
            records[i], blobs[i] = hit[1], hit[2]
        else:
            todo.append(i)
    name = RECORD_NAMES[kind]
    found = _load([os.path.join(root, rels[i], name) for i in todo], kind, brief)
    for i, (stamp, record, blob) in zip(todo, found, strict=True):
        stamps[i], records[i], blobs[i] = stamp, record, blob
    return _index(rels, stamps, records, blobs, racy_ns)


def object_of(path: str) -> str:
    """The object id in `<...>/<id>/<record name>`."""
    end = path.rfind("/")
    return path[path.rfind("/", 0, end) + 1:end]


Read = tuple[str, bytes | str | None]


def read_files(paths: list[str]) -> list[Read]:
    """(stamp, bytes) of every file (scan.MISSING and None for one that cannot be read; a
    str saying why for one that is not a regular file).

    Files are read one after another: from the page cache that is quickest. When they come
    slowly (a cold disk), helpers read the rest ahead, so the disk gets many reads at once."""
    out: list[Read] = []
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


def _read_ahead(paths: list[str]) -> list[Read]:
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


def _read_all(paths: list[str]) -> list[Read]:
    return [_read(p) for p in paths]


def read_one(path: str) -> Read:
    """(stamp, bytes) of one record file, as `read_files` gives them."""
    return _read(path)


def _read(path: str) -> Read:
    try:
        info, data = read_regular(path)
    except NotRegular as exc:
        return _stamp_of(path), f"{os.path.basename(path)} is {exc}"
    except OSError:
        return scan.MISSING, None
    return scan.stamp(info), data


def _stamp_of(path: str) -> str:
    try:
        return scan.stamp(os.lstat(path))
    except OSError:
        return scan.MISSING


def parse_record(kind: str, data: bytes | str | None, brief: bool = False,
                 memo: dict[str, str] | None = None,
                 oid: str | None = None) -> dict[str, Any] | str:
    """The record (in the brief view with `brief`), or why it cannot be used. With `memo`,
    equal strings across the records parsed with it are made one object (`share_strings`).
    With `oid`, a record that does not hash to that id or breaks its schema is damage."""
    name = RECORD_NAMES[kind]
    if data is None:
        return f"{name} is missing"
    if isinstance(data, str):
        return data
    try:
        record = loads(data)
    except ValueError as exc:
        return f"unreadable {name}: {exc}"
    if not isinstance(record, dict):
        return f"unreadable {name}: not a JSON object"
    if oid is not None:
        bad = damage.problem(kind, oid, data, record)
        if bad is not None:
            return bad
    if brief:
        return brief_view(kind, record, memo)
    return record if memo is None else share_strings(record, memo)
