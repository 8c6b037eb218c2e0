"""Writing objects: stage in a folder inside the store, write the record last, fsync, rename.

A crash at any point leaves either no object or a complete one. A staging folder is locked
(flock) by the process writing it, so `gc` and `verify` can tell a live write from a leftover;
readers never look inside `.staging`.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smevals import scope
from smevals.files.canonical import dumps, loads, sha256_bytes
from smevals.files.durable import defer_fsync, fsync_paths, fsync_tree, tree
from smevals.files.regular import read_regular
from smevals.files.workspace import BadName, manifest_at, open_dir, write_new
from smevals.phases import phase
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


_HOST: list[str] = [""]


def host_name() -> str:
    import socket

    _HOST[0] = _HOST_UNSAFE.sub("_", socket.gethostname()) or "host"
    return _HOST[0]


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
            ignore_in_git(folder, fd)
            name = f"{kind}-{_HOST[0] or host_name()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
            with named(folder):
                os.mkdir(name, dir_fd=fd)
        except BaseException:
            os.close(fd)
            raise
        self._staging: int | None = fd          # kept open: the rename starts from it
        self.dir = folder / name
        self._lock = lock_folder(self.dir)

    def abort(self) -> None:
        """Throw the staged files away (safe to call more than once)."""
        shutil.rmtree(self.dir, ignore_errors=True)
        self._release()

    def commit(self, record: RunFields | GradeFields, parent_names: list[str]) -> Written:
        """Hash and seal the files, write the record last and rename the folder into place."""
        return self.seal(record, parent_names).place()

    def seal(self, record: RunFields | GradeFields, parent_names: list[str],
             copy_to: Path | None = None) -> Sealed:
        """Hash and seal the files and write the record last; the folder stays here, locked,
        until it is placed (`Sealed.place`, `place_all`) or aborted. With `copy_to` (an
        empty private folder), every file is also copied there from the very bytes hashed,
        the record too: what store.checkedcopy copies of the object once placed."""
        try:
            return self._seal(record, parent_names, copy_to)
        except BaseException:
            self._release()
            raise

    def _seal(self, record: RunFields | GradeFields, parent_names: list[str],
              copy_to: Path | None) -> Sealed:
        record_name = RECORD_NAMES[self.kind]
        if os.path.lexists(self.dir / record_name):
            raise StoreError(f"'{record_name}' is reserved for the {self.kind} record")
        with phase(f"{self.kind} seal"):
            files = manifest(self.dir, seal=True, copy_to=copy_to)
        with phase(f"{self.kind} record"):
            full: dict[str, Any] = {**record, "format": FORMAT, "kind": self.kind,
                                    "files": files}
            data = dumps(full)
            stamp = timestamp(parse_iso(str(full[STAMP_FIELDS[self.kind]])))
            oid = object_id(stamp, sha256_bytes(data))
            _write_sealed(self.dir, record_name, data)
            if copy_to is not None:
                _write_sealed(copy_to, record_name, data)
        rel = f"{object_parent(self.kind, parent_names)}/{oid}"
        names = [str(n) for n in parent_names]
        # else the caller files it elsewhere, and no neighbour is compared
        return Sealed(self, rel, oid, data, names if record_names(self.kind, full) == names
                      else None)

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
            _rename_into(self.root, self._staging, self.dir.name, rel)
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
        if self._staging is not None:
            os.close(self._staging)
            self._staging = None


@dataclass
class Sealed:
    """A staged object whose files are sealed and whose record is written, not yet placed:
    its id and folder are known, and nobody else sees it until it is renamed into place."""

    staging: Staging
    rel: str
    id: str
    data: bytes                         # the record's bytes
    names: list[str] | None             # compared with a neighbour's (None: filed elsewhere)

    def place(self) -> Written:
        return place_all([self])[0]

    def abort(self) -> None:
        self.staging.abort()


def place_all(objects: list[Sealed], synced: bool = False) -> list[Written]:
    """Make every file and folder of every object durable at once (one fsync pass for the
    batch; `synced`: the caller did, store.batch), then rename each into place in the given
    order (a Run before its Grade). On a failure, the objects not yet placed are thrown
    away and the error raised."""
    placed: list[Written] = []
    try:
        if not synced:
            with phase("fsync"):
                fsync_paths(paths_of(objects))
        with phase("place"):
            for one in objects:
                if one.names is not None:
                    _refuse_shared_folder(one.staging.root / one.rel, one.staging.kind,
                                          one.names)
                placed.append(one.staging._place(one.rel, one.id, one.data))
                one.staging._release()
                if one.names is not None:
                    _shared()[(str(placed[-1].path.parent), one.staging.kind)] = one.names
    except BaseException:
        for one in objects[len(placed):]:
            one.abort()
        raise
    return placed


def paths_of(objects: list[Sealed]) -> list[str]:
    """Every folder and regular file of the staged objects (what is fsynced before they are
    renamed into place)."""
    return [path for one in objects for path in tree(str(one.staging.dir))]


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
    """Two different names must never share a folder: compare with a neighbour's record
    (once per folder and command: objects are never moved, and the names a folder holds
    are those of its first object)."""
    key = (str(dest.parent), kind)
    if _shared().get(key) == names:
        return
    theirs = neighbour_names(dest.parent, kind)
    if theirs is not None and theirs != names:
        raise StoreError(f"{dest.parent} already holds {kind}s of {theirs}, and {names} would "
                         "share it (their folder names collide); rename one of them")
    if theirs is not None:
        _shared()[key] = names


def _shared() -> dict[tuple[str, str], list[str]]:
    """(folder, kind) -> the names its objects are of, as this command found them."""
    return scope.current().memo(__name__)


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


def manifest(folder: Path, seal: bool = False, copy_to: Path | None = None
             ) -> list[FileEntry]:
    """Every file below `folder` (path, size, sha256; a symlink by its target; a FIFO,
    socket or device as special), sorted by path, never following a link or opening
    anything but a regular file (files.workspace). With `seal`, each regular file is also
    made read-only, a copy of its own first when it has other hard links. With `copy_to`,
    every file is copied into that empty folder from the bytes hashed (manifest_at)."""
    fd = open_dir(folder)
    copy = None if copy_to is None else open_dir(copy_to)
    try:
        with named(folder):
            return manifest_at(fd, seal, copy)
    except BadName as exc:
        raise StoreError(str(exc)) from None
    finally:
        os.close(fd)
        if copy is not None:
            os.close(copy)


def _rename_into(root: Path, staging: int | None, name: str, rel: str) -> None:
    """Rename the staging folder `name` (in the folder `staging`, entered when the object was
    staged) to `rel`, every store folder on the way entered (and made where missing) without
    following a link. The folder it lands in is fsynced with the batch (the caller's
    defer_fsync, durable.py)."""
    parent, _, oid = rel.rpartition("/")
    source = os.dup(staging) if staging is not None else open_folder(root, STAGING,
                                                                      create=False)
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


def ignore_in_git(folder: Path, dir_fd: int | None = None) -> None:
    """A `.gitignore` of `*` in the staging folder (the open `dir_fd` when given), so that
    `git add` never takes writes in progress or leftovers of interrupted ones (it ignores
    itself too)."""
    try:
        fd = os.open(".gitignore" if dir_fd is not None else folder / ".gitignore",
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                     dir_fd=dir_fd)
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
