"""Writing objects: stage in a folder inside the store, write the record last, fsync, rename.

A crash at any point leaves either no object or a complete one. A staging folder is locked
(flock) by the process writing it, so `gc` and `verify` can tell a live write from a leftover;
readers never look inside `.staging`.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smevals.files.canonical import dumps, loads, sha256_bytes
from smevals.files.durable import defer_fsync, fsync_tree
from smevals.files.regular import read_regular
from smevals.files.workspace import BadName, manifest_at, open_dir, write_new
from smevals.store.folders import named, open_folder
from smevals.store.layout import (
    ID_RE,
    RECORD_NAMES,
    STAGING,
    STAMP_FIELDS,
    object_id,
    object_parent,
    parse_iso,
    record_names,
    timestamp,
)
from smevals.store.locks import lock_folder, unlock
from smevals.store.records import FileEntry, GradeFields, RunFields

__all__ = ["FORMAT", "RECORD_NAMES", "STAGING", "STAMP_FIELDS", "Staging", "StoreError",
           "Written", "manifest", "object_parent"]

FORMAT = 1
_HOST_UNSAFE = re.compile(r"[^A-Za-z0-9._]+")


class StoreError(Exception):
    """A problem with the store itself (message says which path and why)."""


@dataclass(frozen=True)
class Written:
    id: str
    rel: str          # object folder relative to the store root, with / separators
    path: Path
    existed: bool     # identical content was already stored


def host_name() -> str:
    return _HOST_UNSAFE.sub("_", socket.gethostname()) or "host"


class Staging:
    """A fresh folder inside the store where one object's files are written before commit.

    `<store>/.staging/<kind>-<host>-<pid>-<random>`, locked until commit or abort."""

    def __init__(self, root: Path, kind: str):
        if kind not in RECORD_NAMES:
            raise ValueError(f"unknown object kind '{kind}'")
        self.root = root
        self.kind = kind
        folder = root / STAGING
        fd = open_folder(root, STAGING)         # a real folder, never a link (store.folders)
        try:
            ignore_in_git(folder)
            name = f"{kind}-{host_name()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
            with named(folder):
                os.mkdir(name, dir_fd=fd)
        finally:
            os.close(fd)
        self.dir = folder / name
        self._lock = lock_folder(self.dir)

    def abort(self) -> None:
        """Throw the staged files away (safe to call more than once)."""
        shutil.rmtree(self.dir, ignore_errors=True)
        self._release()

    def commit(self, record: RunFields | GradeFields, parent_names: list[str]) -> Written:
        """Hash and seal the files, write the record last and rename the folder into place."""
        try:
            return self._commit(record, parent_names)
        finally:
            self._release()

    def _commit(self, record: RunFields | GradeFields, parent_names: list[str]) -> Written:
        record_name = RECORD_NAMES[self.kind]
        if os.path.lexists(self.dir / record_name):
            raise StoreError(f"'{record_name}' is reserved for the {self.kind} record")
        files = manifest(self.dir, seal=True)
        full: dict[str, Any] = {**record, "format": FORMAT, "kind": self.kind, "files": files}
        data = dumps(full)
        stamp = timestamp(parse_iso(str(full[STAMP_FIELDS[self.kind]])))
        oid = object_id(stamp, sha256_bytes(data))
        _write_sealed(self.dir, record_name, data)
        fsync_tree(str(self.dir))               # every file and folder, before the rename
        rel = f"{object_parent(self.kind, parent_names)}/{oid}"
        names = [str(n) for n in parent_names]
        if record_names(self.kind, full) == names:      # else the caller files it elsewhere
            _refuse_shared_folder(self.root / rel, self.kind, names)
        return self._place(rel, oid, data)

    def commit_copy(self, data: bytes, rel: str) -> Written:
        """Seal the files put in `dir` as a copy of the object at `rel` whose record is `data`
        (from another store or a worker): the record must hash to the id and be filed at
        `rel`, every file must match its manifest; then the record is written last and the
        folder renamed into place, as by `commit`."""
        try:
            record = _copied_record(self.kind, data, rel)
            if manifest(self.dir, seal=True) != record.get("files"):
                raise StoreError(f"{rel}: its files do not match the record's manifest")
            names = [str(n) for n in record_names(self.kind, record) or []]
            _refuse_shared_folder(self.root / rel, self.kind, names)
            _write_sealed(self.dir, RECORD_NAMES[self.kind], data)
            fsync_tree(str(self.dir))
            return self._place(rel, rel.rpartition("/")[2], data)
        finally:
            self._release()

    def _place(self, rel: str, oid: str, data: bytes) -> Written:
        dest = self.root / rel
        try:
            _rename_into(self.root, self.dir.name, rel)
        except OSError:
            if not (dest / RECORD_NAMES[self.kind]).is_file():
                raise
            if _read(dest / RECORD_NAMES[self.kind]) != data:
                raise StoreError(f"{dest} already exists with a different record "
                                 "(run `smevals verify`)") from None
            self.abort()
            return Written(oid, rel, dest, existed=True)
        defer_fsync(str(dest.parent))           # once per batch: see durable.py
        return Written(oid, rel, dest, existed=False)

    def _release(self) -> None:
        if self._lock is not None:
            unlock(self._lock)
            self._lock = None


def _copied_record(kind: str, data: bytes, rel: str) -> dict[str, Any]:
    """The record of a copied object, once its bytes hash to its id and its names file it
    at `rel` (so a copy can never land anywhere else)."""
    oid = rel.rpartition("/")[2]
    match = ID_RE.match(oid)
    if not match or not sha256_bytes(data).startswith(match.group(2)):
        raise StoreError(f"{rel}: its record does not hash to its id")
    record = loads(data)
    names = record_names(kind, record) if isinstance(record, dict) else None
    if names is None or f"{object_parent(kind, [str(n) for n in names])}/{oid}" != rel:
        raise StoreError(f"{rel}: its record does not belong at that path")
    return dict(record)


def _refuse_shared_folder(dest: Path, kind: str, names: list[str]) -> None:
    """Two different names must never share a folder: compare with a neighbour's record."""
    theirs = neighbour_names(dest.parent, kind)
    if theirs is not None and theirs != names:
        raise StoreError(f"{dest.parent} already holds {kind}s of {theirs}, and {names} would "
                         "share it (their folder names collide); rename one of them")


def neighbour_names(folder: Path, kind: str) -> list[str] | None:
    """The names in the record of any object already in `folder`, if there is one."""
    try:
        with os.scandir(folder) as it:
            for entry in it:
                if entry.name[0] != "." and entry.is_dir(follow_symlinks=False):
                    record = loads(_read(Path(entry.path) / RECORD_NAMES[kind]) or b"null")
                    names = record_names(kind, record) if isinstance(record, dict) else None
                    return None if names is None else [str(n) for n in names]
    except (OSError, ValueError):
        return None
    return None


def manifest(folder: Path, seal: bool = False) -> list[FileEntry]:
    """Every file below `folder` (path, size, sha256; a symlink by its target; a FIFO,
    socket or device as special), sorted by path, never following a link or opening
    anything but a regular file (files.workspace). With `seal`, each regular file is also
    fsynced and made read-only, a copy of its own first when it has other hard links."""
    fd = open_dir(folder)
    try:
        with named(folder):
            return manifest_at(fd, seal)
    except BadName as exc:
        raise StoreError(str(exc)) from None
    finally:
        os.close(fd)


def _rename_into(root: Path, name: str, rel: str) -> None:
    """Rename the staging folder `name` to `rel`, every store folder on the way entered
    (and made where missing) without following a link. The folder it lands in is fsynced
    with the batch (the caller's defer_fsync, durable.py)."""
    parent, _, oid = rel.rpartition("/")
    source = open_folder(root, STAGING, create=False)
    try:
        target = open_folder(root, parent)
        try:
            with named(root / parent):
                os.rename(name, oid, src_dir_fd=source, dst_dir_fd=target)
        finally:
            os.close(target)
    finally:
        os.close(source)


def _write_sealed(folder: Path, name: str, data: bytes) -> None:
    """The record, read-only, as a new file (never written through anything left there)."""
    fd = open_dir(folder)
    try:
        write_new(fd, name, data, 0o444)
    finally:
        os.close(fd)


def ignore_in_git(folder: Path) -> None:
    """A `.gitignore` of `*` in the staging folder, so that `git add` never takes writes in
    progress or leftovers of interrupted ones (it ignores itself too)."""
    try:
        fd = os.open(folder / ".gitignore", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError:
        return                                  # there already (or not writable: no matter)
    with os.fdopen(fd, "w") as handle:
        handle.write("*\n")


def _read(path: Path) -> bytes:
    """The bytes of a regular file; b"" for anything else (a FIFO is never opened)."""
    try:
        return read_regular(str(path))[1]
    except OSError:
        return b""
