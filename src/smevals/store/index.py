"""Reading every record of a working-tree store through the cache, never stale.

Each read lists the object folders and stats every record file. A record whose stat stamp
(inode, size, mtime and ctime in ns) is the one saved with the cache is taken from the
cache; any other is read and parsed again, and the cache saved. A record changed within
RACY_NS of a read is not trusted by the next read (git's "racy clean" rule): a second
change in the same clock tick could leave its stamp as it was.

Records are cached in full or in the brief view (store/brief.py), each with its git blob
id (for gitindex.py).
"""

from __future__ import annotations

import gc
import hashlib
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from smevals.files.canonical import loads
from smevals.files.regular import NotRegular, read_record
from smevals.store import cache, damage
from smevals.store.brief import VERSION as BRIEF_VERSION
from smevals.store.brief import brief as brief_view
from smevals.store.brief import share_strings
from smevals.store.layout import DEPTH, RECORD_NAMES

RACY_NS = 2_000_000_000
FREEZE_AFTER = 100_000      # new container objects that make a pause end in gc.freeze()

Stamp = tuple[int, int, int, int] | None      # inode, size, mtime_ns, ctime_ns; None: unknown


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


def read_kind(root: Path, kind: str, brief: bool = False) -> cache.Index:
    """(rels, stamps, records, blobs) of every object of `kind`; a record that cannot be
    read or parsed, or an object whose files are not those its record lists, is given as
    a str saying why. With `brief`, records are in the brief
    view (`smevals.store.brief`), cached apart from the full ones."""
    name = label(kind, brief)
    with gc_paused():
        racy_ns = time.time_ns() - RACY_NS
        old = cache.load(root, name)
        rels, stamps, dirs, links = listing(root, kind, old.dirs if old else None, racy_ns)
        if old is not None and old.stamps == stamps and old.rels == rels:
            if dirs != old.dirs:
                cache.save(root, name, old._replace(dirs=dirs))
            return _with_links(root, checked(str(root), old), links)
        fresh = _refresh(root, kind, rels, stamps, old, brief)._replace(dirs=dirs)
        cache.save(root, name, _distrust_racy(fresh, racy_ns))
        return _with_links(root, checked(str(root), fresh), links)


def _with_links(root: Path, found: cache.Index, links: list[str]) -> cache.Index:
    """`found` with each symlink met where a store folder belongs given as damage (a str
    saying where it points), so that readers name it: it is never followed."""
    if not links:
        return found
    rows = list(zip(found.rels, found.stamps, found.records, found.blobs, found.files,
                    strict=True))
    for rel in links:
        try:
            target = os.readlink(f"{root}/{rel}")
        except OSError:
            target = "?"
        rows.append((rel, None, f"a symlink to {target!r} where a folder of the store "
                     "belongs: never followed (an object is a real folder)", "", ()))
    rows.sort(key=lambda row: row[0])
    rels, stamps, records, blobs, files = (list(column) for column in zip(*rows, strict=True))
    return found._replace(rels=rels, stamps=stamps, records=records, blobs=blobs, files=files)


def checked(root: str, found: cache.Index) -> cache.Index:
    """`found` with every object whose files are not those its record lists given as
    damage (a str saying why): the cheap check of every read, one lstat per listed file
    (damage.files_problem says why; this loop only finds them, and is kept tight)."""
    lstat, regular = os.lstat, stat.S_ISREG
    bad: list[int] = []
    for i, (rel, files) in enumerate(zip(found.rels, found.files, strict=True)):
        for j in range(0, len(files), 2):
            size = files[j + 1]
            try:
                st = lstat(f"{root}/{rel}/{files[j]}")
            except (OSError, ValueError):
                bad.append(i)
                break
            if (size < 0 or st.st_size != size or not regular(st.st_mode)) \
                    and damage.file_problem(files[j], size, st.st_mode, st.st_size):
                bad.append(i)
                break
    if not bad:
        return found
    records = list(found.records)
    for i in bad:
        why = damage.files_problem(f"{root}/{found.rels[i]}", found.files[i])
        if why is not None and records[i].__class__ is dict:
            records[i] = why
    return found._replace(records=records)


def label(kind: str, brief: bool) -> str:
    """The cache file's name part: the kind, and for brief records the brief view's version."""
    return f"{kind}-brief{BRIEF_VERSION}" if brief else kind


def listing(root: Path, kind: str, dirs: Dirs | None = None,
            racy_ns: int = 0) -> tuple[list[str], list[Stamp], Dirs, list[str]]:
    """Every object folder of `kind` (sorted, relative to `root`; hidden names and
    non-folders are not objects), its record's stamp, the folders' names as listed, and
    the symlinks met where a folder belongs (never followed). With `dirs` (those names from
    a read before), a folder whose stamp is unchanged is not listed again; folders changed
    since `racy_ns` are left out of the names kept."""
    walk = _Walk(str(root), RECORD_NAMES[kind], dirs or {}, racy_ns)
    walk.folder(f"{kind}s", DEPTH[kind])
    return walk.rels, walk.stamps, walk.dirs, walk.links


# rel: (ino, mtime, ctime), names: its sub-folders, and its symlinks as LINK + name
Dirs = dict[str, tuple[tuple[int, int, int], list[str]]]
LINK = "\0"                 # never in a file name


class _Walk:
    def __init__(self, root: str, record: str, old: Dirs, racy_ns: int):
        self.root, self.record, self.old, self.racy_ns = root, record, old, racy_ns
        self.rels: list[str] = []
        self.stamps: list[Stamp] = []
        self.dirs: Dirs = {}
        self.links: list[str] = []

    def folder(self, rel: str, depth: int) -> None:
        path = f"{self.root}/{rel}"
        names = self.names(path, rel)
        if names and names[0][0] == LINK:           # sorted first: NUL sorts first
            self.links += [f"{rel}/{name[1:]}" for name in names if name[0] == LINK]
            names = [name for name in names if name[0] != LINK]
        if depth > 0:
            for name in names:
                self.folder(f"{rel}/{name}", depth - 1)
            return
        for name in names:
            self.rels.append(f"{rel}/{name}")
            try:
                st = os.stat(f"{path}/{name}/{self.record}", follow_symlinks=False)
            except OSError:
                self.stamps.append(None)
                continue
            self.stamps.append((st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))

    def names(self, path: str, rel: str) -> list[str]:
        """The sub-folders of `rel`, sorted: as listed before while its stamp is the same."""
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            return []
        if not stat.S_ISDIR(st.st_mode):        # a linked `runs/` is never read through
            return []
        stamp = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
        hit = self.old.get(rel)
        if hit is not None and hit[0] == stamp:
            names = hit[1]
        else:
            try:
                with os.scandir(path) as it:
                    names = sorted(e.name if e.is_dir(follow_symlinks=False) else LINK + e.name
                                   for e in it if e.name[0] != "." and (
                                       e.is_dir(follow_symlinks=False) or e.is_symlink()))
            except OSError:
                return []
        if st.st_mtime_ns < self.racy_ns and st.st_ctime_ns < self.racy_ns:
            self.dirs[rel] = (stamp, names)
        return names


def _refresh(root: Path, kind: str, rels: list[str], stamps: list[Stamp],
             old: cache.Index | None, brief: bool) -> cache.Index:
    """The index of `rels`, taking from `old` each record whose stamp is unchanged."""
    known: dict[str, tuple[Stamp, Any, str, damage.Listed]] = {}
    if old is not None:
        known = {rel: (stamp, record, blob, listed) for rel, stamp, record, blob, listed
                 in zip(old.rels, old.stamps, old.records, old.blobs, old.files, strict=True)}
    records: list[Any] = [None] * len(rels)
    files: list[damage.Listed] = [()] * len(rels)
    blobs = [""] * len(rels)
    stamps = list(stamps)
    memo: dict[str, str] = {}
    suffix = "/" + RECORD_NAMES[kind]
    for i, (rel, stamp) in enumerate(zip(rels, stamps, strict=True)):
        hit = known.get(rel)
        if hit is not None and stamp is not None and hit[0] == stamp:
            records[i], blobs[i], files[i] = hit[1], hit[2], hit[3]
            continue
        stamps[i], data = _read(os.path.join(root, rel) + suffix)
        records[i], files[i] = parse_listed(kind, data, brief, memo, rel)
        blobs[i] = blob_id(data)
    return cache.Index(rels, stamps, records, blobs, {}, files)


def _distrust_racy(index: cache.Index, racy_ns: int) -> cache.Index:
    """The index as saved: records changed since `racy_ns` keep no stamp, so the next read
    reads them again."""
    stamps = [None if stamp is None or stamp[2] >= racy_ns or stamp[3] >= racy_ns else stamp
              for stamp in index.stamps]
    return index._replace(stamps=stamps)


def blob_id(data: bytes | str | None) -> str:
    """The id git gives a file with these bytes (its sha1 object name), "" for None: records
    read here are reused when a git revision holds the same blob (gitindex.py)."""
    if not isinstance(data, bytes):
        return ""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


Read = tuple[Stamp, bytes | str | None]


def read_one(path: str) -> Read:
    """(stamp, bytes) of one record file: None and None when it cannot be read, a str saying
    why when it is not a regular file. The stamp is taken on the handle the bytes are read
    through, so stamp and bytes always belong together."""
    return _read(path)


def _read(path: str) -> Read:
    try:
        info, data = read_record(path)
    except NotRegular as exc:
        return None, f"{os.path.basename(path)} is {exc}"
    except OSError:
        return None, None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns), data


def parse_record(kind: str, data: bytes | str | None, brief: bool = False,
                 memo: dict[str, str] | None = None,
                 rel: str | None = None) -> dict[str, Any] | str:
    """The record (in the brief view with `brief`), or why it cannot be used. With `memo`,
    equal strings across the records parsed with it are made one object (`share_strings`).
    With `rel` (the object's folder), a record that does not hash to the folder's id, is
    not filed where its fields say, or breaks its schema is damage."""
    return parse_listed(kind, data, brief, memo, rel)[0]


def parse_listed(kind: str, data: bytes | str | None, brief: bool = False,
                 memo: dict[str, str] | None = None,
                 rel: str | None = None) -> tuple[dict[str, Any] | str, damage.Listed]:
    """`parse_record`, with the files the record lists (`damage.listed`)."""
    name = RECORD_NAMES[kind]
    if data is None:
        return f"{name} is missing", ()
    if isinstance(data, str):
        return data, ()
    try:
        record = loads(data)
    except ValueError as exc:
        return f"unreadable {name}: {exc}", ()
    if not isinstance(record, dict):
        return f"unreadable {name}: not a JSON object", ()
    if rel is not None:
        bad = damage.problem(kind, rel, data, record)
        if bad is not None:
            return bad, ()
    files = damage.listed(record)
    if memo is not None:
        files = tuple(memo.setdefault(f, f) if f.__class__ is str else f for f in files)
    if brief:
        return brief_view(kind, record, memo), files
    return (record if memo is None else share_strings(record, memo)), files
