"""Finding the object folders of one kind, remembering each folder's listing.

A folder's entries can only change if its mtime and ctime change, so a snapshot of
(folder, stamp, sorted sub-folder names) lets the next walk stat a folder instead of
listing it. A folder changed within the racy window of a walk is not put in the snapshot
(a second change in the same clock tick could keep its stamp). The snapshot is a cache file
like the index: deleting it only costs time.
"""

from __future__ import annotations

import marshal
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from smevals.store import cache

Snapshot = dict[str, tuple[tuple[int, int, int], list[str]]]
Groups = list[tuple[str, list[str]]]
THREADS = 8


def object_groups(root: str, kind: str, depth: int, old: Snapshot | None = None,
                  racy_ns: int = 0, parallel: bool = False) -> tuple[Groups, Snapshot]:
    """(parent folder relative to the root, sorted object folder names) for every folder that
    holds objects, in sorted order, and the new snapshot. Hidden names and non-folders are
    not objects. With `parallel`, subtrees are listed by threads (for a cold disk)."""
    walker = _Walker(root, old or {}, racy_ns)
    rel = f"{kind}s"
    if not parallel or depth == 0:
        walker.walk(rel, depth)
        return walker.groups, walker.new
    top = walker.names(rel)
    if top is None:
        return [], {}

    def subtree(name: str) -> tuple[Groups, Snapshot]:
        part = _Walker(root, old or {}, racy_ns)
        part.walk(f"{rel}/{name}", depth - 1)
        return part.groups, part.new

    groups: Groups = []
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        for part_groups, part_new in pool.map(subtree, top):
            groups += part_groups
            walker.new.update(part_new)
    return groups, walker.new


class _Walker:
    def __init__(self, root: str, old: Snapshot, racy_ns: int):
        self.root = root
        self.old = old
        self.racy_ns = racy_ns
        self.new: Snapshot = {}
        self.groups: Groups = []

    def walk(self, rel: str, depth: int) -> None:
        names = self.names(rel)
        if names is None:
            return
        if depth == 0:
            self.groups.append((rel, names))
            return
        for name in names:
            self.walk(f"{rel}/{name}", depth - 1)

    def names(self, rel: str) -> list[str] | None:
        """The sorted sub-folder names of `rel`, from the snapshot when it is unchanged."""
        path = os.path.join(self.root, rel)
        try:
            st = os.stat(path)
        except OSError:
            return None
        stamp = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
        hit = self.old.get(rel)
        names = hit[1] if hit is not None and hit[0] == stamp else _list(path)
        if names is None:
            return None
        if st.st_mtime_ns < self.racy_ns and st.st_ctime_ns < self.racy_ns:
            self.new[rel] = (stamp, names)
        return names


def _list(path: str) -> list[str] | None:
    try:
        with os.scandir(path) as it:
            names = [e.name for e in it if e.name[0] != "." and e.is_dir(follow_symlinks=False)]
    except OSError:
        return None
    names.sort()
    return names


def load(path: str) -> Snapshot | None:
    try:
        with open(path, "rb") as handle:
            data: Any = marshal.loads(handle.read())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def save(path: str, snapshot: Snapshot) -> None:
    """Write atomically; failing to is ignored (it is only a cache)."""
    cache.write_marshal(path, snapshot)
