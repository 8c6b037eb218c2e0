"""Writing objects: stage in a folder inside the store, fsync, write the record last, rename.

A crash at any point leaves either no object or a complete one; staging leftovers are
ignored by readers, reported by verify and removed by gc.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smevals.store.canonical import dumps, sha256_bytes, sha256_file
from smevals.store.layout import object_id, parse_iso, slug, timestamp

FORMAT = 1
RECORD_NAMES = {"run": "run.json", "grade": "grade.json"}
STAMP_FIELDS = {"run": "started", "grade": "graded"}
STAGING = ".staging"


class StoreError(Exception):
    """A problem with the store itself (message says which path and why)."""


@dataclass(frozen=True)
class Written:
    id: str
    rel: str          # object folder relative to the store root, with / separators
    path: Path
    existed: bool     # identical content was already stored


def object_parent(kind: str, names: list[str]) -> str:
    """`runs/<task>/<config>/<model>` or `grades/<grader>/<task>/<config>/<model>`."""
    return "/".join([kind + "s", *(slug(n) for n in names)])


class Staging:
    """A fresh folder inside the store where one object's files are written before commit."""

    def __init__(self, root: Path, kind: str):
        self.root = root
        self.kind = kind
        name = f"{kind}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.dir = root / STAGING / name
        self.dir.mkdir(parents=True)

    def abort(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def commit(self, record: dict[str, Any], parent_names: list[str]) -> Written:
        """Hash the files, write the record last, make files read-only and rename into place."""
        record_name = RECORD_NAMES[self.kind]
        if (self.dir / record_name).exists() or (self.dir / record_name).is_symlink():
            raise StoreError(f"'{record_name}' is reserved for the {self.kind} record")
        full = {**record, "format": FORMAT, "kind": self.kind, "files": manifest(self.dir)}
        data = dumps(full)
        digest = sha256_bytes(data)
        stamp = timestamp(parse_iso(str(full[STAMP_FIELDS[self.kind]])))
        oid = object_id(stamp, digest)
        _write_file(self.dir / record_name, data)
        _seal(self.dir)
        rel = f"{object_parent(self.kind, parent_names)}/{oid}"
        return self._place(rel, oid)

    def _place(self, rel: str, oid: str) -> Written:
        dest = self.root / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        _fsync_dir(self.dir)
        try:
            os.rename(self.dir, dest)
        except OSError:
            if (dest / RECORD_NAMES[self.kind]).is_file():
                self.abort()
                return Written(oid, rel, dest, existed=True)
            raise
        _fsync_dir(dest.parent)
        return Written(oid, rel, dest, existed=False)


def manifest(folder: Path) -> list[dict[str, Any]]:
    """Every file below `folder` (path, size, sha256; a symlink by its target), sorted."""
    entries: list[dict[str, Any]] = []
    for current, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files + [d for d in dirs if os.path.islink(os.path.join(current, d))]):
            path = Path(current, name)
            rel = path.relative_to(folder).as_posix()
            entries.append(_entry(path, rel))
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(current, d))]
    entries.sort(key=lambda e: e["path"])
    return entries


def _entry(path: Path, rel: str) -> dict[str, Any]:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return {"path": rel, "symlink": os.readlink(path)}
    if not stat.S_ISREG(info.st_mode):
        return {"path": rel, "special": True}
    size, digest = sha256_file(path)
    return {"path": rel, "size": size, "sha256": digest}


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _seal(folder: Path) -> None:
    """fsync every regular file and make it read-only."""
    for current, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(current, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.chmod(path, 0o444)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
