"""Reading a store: every Run and Grade with its record, by id prefix, from disk or git."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smevals.store import cache
from smevals.store.canonical import loads
from smevals.store.layout import slug
from smevals.store.objects import RECORD_NAMES, Staging
from smevals.store.sources import DEPTH, FsSource, GitSource, Source

KINDS = ("run", "grade")
MIN_PREFIX = 6


@dataclass(frozen=True, slots=True)
class Obj:
    kind: str
    id: str
    rel: str                   # object folder relative to the store root
    record: dict[str, Any]


class AmbiguousId(Exception):
    pass


class UnknownId(Exception):
    pass


def store_root(eval_dir: Path, eval_name: str, store: str | None) -> Path:
    """`<eval>/results` by default; with --store, one sub-folder per Eval name."""
    if store:
        return Path(store) / slug(eval_name)
    return eval_dir / "results"


class Store:
    """One Eval's results: write through `stage`, read through `runs()` and `grades()`."""

    def __init__(self, root: Path, rev: str | None = None):
        self.root = root
        self.rev = rev
        self.source: Source = GitSource(root, rev) if rev else FsSource(root)
        self.broken: list[tuple[str, str]] = []     # (rel, reason) of unreadable records
        self._objs: dict[str, list[Obj]] = {}

    def stage(self, kind: str) -> Staging:
        if self.rev:
            raise ValueError("cannot write to a store read at a git revision")
        return Staging(self.root, kind)

    def runs(self) -> list[Obj]:
        return self._all("run")

    def grades(self) -> list[Obj]:
        return self._all("grade")

    def forget(self) -> None:
        """Drop what was read, so the next call sees objects written since."""
        self._objs.clear()

    def _all(self, kind: str) -> list[Obj]:
        if kind not in self._objs:
            if isinstance(self.source, FsSource):
                self._objs[kind] = _read_cached(self, kind)
            else:
                self._objs[kind] = [o for o in self._parse(kind, self.source.records(kind)) if o]
        return self._objs[kind]

    def _parse(self, kind: str, items: Any) -> list[Obj | None]:
        return [self.make_obj(kind, rel, data) for rel, data in items]

    def make_obj(self, kind: str, rel: str, data: bytes) -> Obj | None:
        try:
            record = loads(data)
            if not isinstance(record, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            self.broken.append((rel, f"unreadable {RECORD_NAMES[kind]}: {exc}"))
            return None
        return Obj(kind, rel.rsplit("/", 1)[1], rel, record)

    def resolve(self, prefix: str) -> Obj:
        """The one object whose id (or hash part) starts with `prefix` (at least 6 characters)."""
        if len(prefix) < MIN_PREFIX:
            raise UnknownId(f"an id prefix needs at least {MIN_PREFIX} characters: '{prefix}'")
        found = [o for kind in KINDS for o in self._all(kind) if _matches(o.id, prefix)]
        if not found:
            raise UnknownId(f"no Run or Grade with id '{prefix}' in {self.source.label}")
        if len(found) > 1:
            names = "\n".join(f"  {o.kind} {o.id}  {o.rel}" for o in found[:20])
            raise AmbiguousId(f"id prefix '{prefix}' is ambiguous; candidates:\n{names}")
        return found[0]

    def read_file(self, obj: Obj, name: str) -> bytes:
        return self.source.read(f"{obj.rel}/{name}")

    def path_of(self, obj: Obj) -> Path:
        return self.root / obj.rel


def _matches(oid: str, prefix: str) -> bool:
    return oid.startswith(prefix) or oid.split("-", 1)[-1].startswith(prefix)


def _read_cached(store: Store, kind: str) -> list[Obj]:
    index = cache.load(store.root)
    old = index.get(kind, {})
    new: dict[str, Any] = {}
    out: list[Obj] = []
    changed = False
    for parent in _parents(store.root, kind):
        entry, dirty = _refresh_parent(store, kind, parent, old.get(parent))
        changed |= dirty
        new[parent] = entry
        out.extend(entry[1].values())
    if changed or set(old) != set(new):
        index[kind] = new
        cache.save(store.root, index)
    return [o for o in out if o is not None]


def _parents(root: Path, kind: str) -> list[str]:
    from smevals.store.sources import _dirs_at_depth

    return list(_dirs_at_depth(str(root / f"{kind}s"), f"{kind}s", DEPTH[kind] - 1))


def _refresh_parent(store: Store, kind: str, parent: str, cached: Any) -> tuple[Any, bool]:
    """(dir mtime, {object rel: Obj}) for the folder holding objects, reusing what is unchanged."""
    path = os.path.join(store.root, parent)
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        return (0, {}, {}), True
    if cached and cached[0] == mtime:
        names = cached[2].keys()
        dirty = False
    else:
        names = [e.name for e in os.scandir(path) if e.is_dir() and not e.name.startswith(".")]
        dirty = True
    objs, stamps = {}, {}
    record_name = RECORD_NAMES[kind]
    for name in sorted(names):
        rel = f"{parent}/{name}"
        try:
            info = os.stat(os.path.join(path, name, record_name))
            stamp = (info.st_mtime_ns, info.st_size)
        except OSError:
            stamp = None
        if stamp is not None and cached and cached[2].get(name) == stamp and cached[1].get(rel):
            objs[rel], stamps[name] = cached[1][rel], stamp
            continue
        dirty = True
        data = b"" if stamp is None else _read(os.path.join(path, name, record_name))
        objs[rel], stamps[name] = store.make_obj(kind, rel, data), stamp
    return (mtime, objs, stamps), dirty


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""
