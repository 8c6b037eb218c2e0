"""The store as it is in the working tree."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from smevals.files.regular import NotRegular, read_record, read_regular
from smevals.files.workspace import hash_copy
from smevals.store import damage, folders, index
from smevals.store.base import Entry, Scanned
from smevals.store.layout import DEPTH, KINDS, RECORD_NAMES


class FsSource:
    """The store as it is in the working tree."""

    def __init__(self, root: Path):
        self.root = root
        self.label = str(root)
        self._walked: dict[str, tuple[list[str], list[str]]] = {}

    writable = True

    def records(self, kind: str, brief: bool) -> tuple[Sequence[str], Sequence[Any]]:
        for rel, why in folders.problems(self.root):      # never read through (verify)
            damage.note(self.label, rel, why)
        found = index.read_kind(self.root, kind, brief)
        return found.rels, found.records

    def fresh(self, kind: str, parent: str, known: AbstractSet[str]) -> list[tuple[str, Any]]:
        try:
            names = sorted(n for n in os.listdir(self.root / parent)
                           if n[:1] != "." and n not in known)
        except OSError:
            return []
        out: list[tuple[str, Any]] = []
        for oid in names:
            path = os.path.join(self.root, parent, oid, RECORD_NAMES[kind])
            record, listed = index.parse_listed(kind, index.read_one(path)[1],
                                                rel=f"{parent}/{oid}")
            if isinstance(record, dict) and listed:     # every file as listed (damage.py)
                record = damage.files_problem(os.path.join(self.root, parent, oid),
                                              listed) or record
            out.append((oid, record))
        return out

    def afresh(self) -> FsSource:
        return FsSource(self.root)

    def empty(self) -> bool:
        return not any((self.root / f"{kind}s").is_dir() for kind in KINDS)

    def objects(self, kind: str) -> list[str]:
        return self._walk(kind)[0]

    def strays(self, kind: str) -> list[str]:
        return self._walk(kind)[1]

    def _walk(self, kind: str) -> tuple[list[str], list[str]]:
        if kind not in self._walked:
            found: list[str] = []
            strays: list[str] = []
            base = f"{kind}s"
            top = os.path.join(self.root, base)
            if os.path.isdir(top) and not os.path.islink(top):     # else: store.folders
                walk_objects(top, base, DEPTH[kind], found, strays)
            self._walked[kind] = (found, strays)
        return self._walked[kind]

    def read(self, rel: str) -> bytes:
        return read_regular(str(self.root / rel))[1]

    def listing(self, rel: str) -> list[Entry]:
        return self._files(rel, _record_of(rel), hashed=False)

    def scan(self, kind: str) -> Iterator[Scanned]:
        name = RECORD_NAMES[kind]
        for rel in self.objects(kind):
            yield Scanned(rel, read_or_none(os.path.join(self.root, rel, name)),
                          self._files(rel, name, hashed=True))

    def _files(self, rel: str, record: str, hashed: bool) -> list[Entry]:
        folder = os.path.join(self.root, rel)
        out = [_fs_entry(path, inner, what, hashed) for path, inner, what in _tree(folder, "")
               if inner != record]
        out.sort()
        return out


def _record_of(rel: str) -> str:
    return RECORD_NAMES["grade" if rel.startswith("grades/") else "run"]


def walk_objects(path: str, rel: str, depth: int, found: list[str], strays: list[str]) -> None:
    """Append to `found` every folder `depth` levels below `path` (sorted); anything else met
    on the way (files, hidden folders, symlinks) goes to `strays`."""
    try:
        with os.scandir(path) as it:
            entries = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in it)
    except FileNotFoundError:
        return
    except OSError:
        strays.append(rel)
        return
    for name, is_dir in entries:
        if not is_dir or name.startswith("."):
            strays.append(f"{rel}/{name}")
        elif depth == 0:
            found.append(f"{rel}/{name}")
        else:
            walk_objects(os.path.join(path, name), f"{rel}/{name}", depth - 1, found, strays)


def _tree(folder: str, prefix: str) -> Iterator[tuple[str, str, str]]:
    """(path, path inside the object, "file" | "link" | "other") of every non-folder."""
    try:
        it = os.scandir(folder)
    except OSError:
        return
    with it:
        for entry in it:
            if entry.is_dir(follow_symlinks=False):
                yield from _tree(entry.path, f"{prefix}{entry.name}/")
            elif entry.is_file(follow_symlinks=False):
                yield entry.path, prefix + entry.name, "file"
            else:
                yield entry.path, prefix + entry.name, "link" if entry.is_symlink() else "other"


def _fs_entry(path: str, inner: str, what: str, hashed: bool) -> Entry:
    if what == "link":
        return Entry(inner, 0, None, os.readlink(path))
    if what == "file" and hashed:
        size, digest = hash_file(path)
        return Entry(inner, size, digest, None)
    try:
        return Entry(inner, os.lstat(path).st_size, None, None)
    except OSError:
        return Entry(inner, -1, "", None)


def hash_file(path: str) -> tuple[int, str]:
    """(size, sha256) of a file, read in chunks; an unreadable file hashes as empty text."""
    try:
        with open(path, "rb", buffering=0) as handle:
            return hash_copy(handle.fileno(), None)
    except OSError:
        return -1, ""


def read_or_none(path: str) -> bytes | str | None:
    """The bytes of a regular file, None when it cannot be read, or a str saying what it is
    when it is not a regular file (never opened, so a FIFO cannot block)."""
    try:
        return read_record(path)[1]
    except NotRegular as exc:
        return f"{os.path.basename(path)} is {exc}"
    except OSError:
        return None
