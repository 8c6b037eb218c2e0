"""A Task's starting files (`workspace:`): found, checked and hashed, never following a link.

`workspace:` is a folder relative to the Eval (its content becomes the top of the Run's
workspace) or a list of files relative to the Eval (each kept at that relative path). The
files are data of the Task, so their names and bytes are hashed into the Run's inputs
(run/plan.py): editing a starting file makes the earlier Runs stale, as a prompt edit does.
Nothing inside may be a symlink or a special file, and the whole is bounded in count and size.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smevals import caches
from smevals.errors import Problem, SmevalsError
from smevals.evaldef.load import bad_byte, display_path, printable
from smevals.evaldef.model import Task
from smevals.evaldef.paths import path_problem
from smevals.files.canonical import dumps, sha256_bytes
from smevals.files.regular import NotRegular, describe, megabytes, open_regular
from smevals.files.workspace import Folders, hash_copy, remove, write_all

KEY = "workspace"
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_FILES = 10_000
SIZE_SETTING = "SMEVALS_MAX_WORKSPACE_MB"
SIZE_MB = 100
# The bytes of small starting trees are kept (once hashed, by this process) to copy each Run's
# from: at most KEEP_TREE bytes a tree, KEEP_ALL bytes over all trees kept.
KEEP_TREE = 8 << 20
KEEP_ALL = 64 << 20
# What smevals itself puts at the top of a Run: never the agent's work, never a starting file
RESERVED = ("output.txt", "stderr.txt", "smevals-usage.json", "transcript.jsonl",
            "workspace.diff", "run.json")


class WorkspaceError(SmevalsError):
    """A Task's `workspace:` that cannot be used (the message names the path and why);
    `index` is the item of a list that is at fault."""

    def __init__(self, message: str, index: int | None = None):
        super().__init__(message)
        self.index = index


@dataclass(frozen=True)
class StartFile:
    rel: str              # where it goes in the Run's workspace (/ separators)
    source: Path          # where it is in the Eval
    size: int
    executable: bool


@dataclass(frozen=True)
class Starting:
    """A Task's starting files, sorted by `rel`, and their digest (names and bytes)."""

    files: tuple[StartFile, ...]
    sha256: dict[str, str]
    digest: str
    # each file's bytes as hashed (same order as `files`), when the tree was small enough
    kept: tuple[bytes, ...] | None = field(default=None, compare=False, repr=False)

    def by_rel(self) -> dict[str, StartFile]:
        return {f.rel: f for f in self.files}


def eval_dir(task: Task) -> Path:
    """The Eval folder of a Task (its file sits in `tasks/`)."""
    return task.path.parent.parent


def has_workspace(task: Task | dict[str, Any]) -> bool:
    doc = task.doc if isinstance(task, Task) else task
    return doc.get(KEY) is not None


def spec_problems(task: Task) -> list[Problem]:
    """Why the Task's `workspace:` cannot be used, at its file, line and field (validate, run)."""
    if not has_workspace(task):
        return []
    try:
        starting(task)
    except WorkspaceError as exc:
        line, col = task.locs.get((KEY, exc.index), task.pos(KEY))
        return [Problem(display_path(task.path), task.line or line, col, str(exc), KEY)]
    return []


_CACHE: dict[tuple[str, str], tuple[tuple[Any, ...], Starting]] = {}
caches.register(__name__, "_CACHE")


def forget() -> None:
    """Forget the digests kept of earlier calls (each file is hashed again)."""
    _CACHE.clear()


def _kept_bytes() -> int:
    return sum(sum(map(len, made.kept or ())) for _sig, made in _CACHE.values())


def starting(task: Task) -> Starting | None:
    """The Task's starting files and digest; None without `workspace:`. Raises WorkspaceError.
    Files are hashed again only when their size, time or inode changed since the last call."""
    spec = task.doc.get(KEY)
    if spec is None:
        return None
    return tree_of(eval_dir(task), spec)


def tree_of(base: Path, spec: object) -> Starting:
    """The files `spec` names below the folder `base` (a folder, whose content goes to the top,
    or a list of files, each kept at its path), checked, bounded and hashed."""
    found = _find(base, spec)
    _bounded(found)
    signature = tuple((rel, *stamp_of(info)) for rel, _, info in found)
    key = (os.path.realpath(base), dumps(spec).decode())
    cached = _CACHE.get(key)
    if cached is not None and cached[0] == signature:
        return cached[1]
    _CACHE.pop(key, None)
    total = sum(info.st_size for _, _, info in found)
    made = _hashed(found, keep=total <= KEEP_TREE and _kept_bytes() + total <= KEEP_ALL)
    _CACHE[key] = (signature, made)
    return made


Found = list[tuple[str, str | Path, os.stat_result]]   # rel, path in the Eval, lstat


def _find(base: Path, spec: object) -> Found:
    if isinstance(spec, str):
        if os.path.normpath(spec.replace("\\", "/")) == ".":
            raise WorkspaceError("must be a folder inside the Eval, not the Eval itself")
        folder = _inside(base, spec, "folder")
        if not stat.S_ISDIR(folder[1].st_mode):
            raise WorkspaceError(f"'{spec}' is {_what(folder[0])}, not a folder")
        found: Found = []
        _walk(folder[0], "", spec, found)
        return sorted(found, key=lambda item: item[0])
    if not isinstance(spec, list) or not spec or not all(isinstance(s, str) for s in spec):
        raise WorkspaceError("must be a folder or a non-empty list of files (paths relative "
                             "to the Eval)")
    out: Found = []
    for index, name in enumerate(spec):
        try:
            path, info = _inside(base, name, "file")
        except WorkspaceError as exc:
            raise WorkspaceError(str(exc), index) from None
        if not stat.S_ISREG(info.st_mode):
            raise WorkspaceError(f"'{name}' is {_what(path)}, not a regular file", index)
        out.append((Path(name.replace("\\", "/")).as_posix(), path, info))
    rels = [rel for rel, _, _ in out]
    if len(set(rels)) != len(rels):
        raise WorkspaceError("lists a file twice")
    _no_reserved(rels)
    return sorted(out, key=lambda item: item[0])


def _inside(base: Path, name: str, kind: str) -> tuple[Path, os.stat_result]:
    """`name` below the Eval, refused when it is absolute, has `..`, passes a symlink or is
    missing."""
    why = path_problem(name)
    if why is not None:
        raise WorkspaceError(f"the {kind} {why}")
    path = base / name.replace("\\", "/")
    try:
        info = os.lstat(path)
    except OSError:
        raise WorkspaceError(f"no such {kind} '{name}' in the Eval folder") from None
    if stat.S_ISLNK(info.st_mode) or os.path.realpath(path) != os.path.join(
            os.path.realpath(base), os.path.normpath(name)):
        raise WorkspaceError(f"'{name}' is or passes through a symlink; a starting file "
                             "must be a regular file inside the Eval")
    return path, info


def _walk(folder: str | Path, prefix: str, spec: str, found: Found) -> None:
    with os.scandir(folder) as entries:
        items = sorted(entries, key=lambda e: e.name)
    for entry in items:
        rel = prefix + entry.name
        if bad_byte(rel) is not None:
            raise WorkspaceError(f"'{spec}/{printable(rel)}': the file name is not valid "
                                 "UTF-8; rename it")
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            _walk(entry.path, rel + "/", spec, found)
        elif stat.S_ISREG(info.st_mode):
            if not prefix:
                _no_reserved([rel])
            found.append((rel, entry.path, info))     # a Path only when hashed
        else:
            raise WorkspaceError(f"'{spec}/{rel}' is {_what(Path(entry.path))}; a workspace "
                                 "holds regular files and folders only")
        if len(found) > MAX_FILES:
            raise WorkspaceError(f"'{spec}' holds more than {MAX_FILES} files")


def _no_reserved(rels: list[str]) -> None:
    for rel in rels:
        if rel in RESERVED:
            raise WorkspaceError(f"'{rel}' is a name smevals keeps for itself at the top of "
                                 "a Run; rename that starting file")


def _bounded(found: Found) -> None:
    if len(found) > MAX_FILES:
        raise WorkspaceError(f"holds {len(found)} files, above the limit of {MAX_FILES}")
    total = sum(info.st_size for _, _, info in found)
    limit = megabytes(SIZE_SETTING, SIZE_MB)
    if total > limit:
        raise WorkspaceError(f"holds {total} bytes, above the {limit / (1 << 20):g} MB limit "
                             f"of a workspace ({SIZE_SETTING} raises it)")


def _what(path: Path) -> str:
    return describe(str(path))


def _hashed(found: Found, keep: bool = False) -> Starting:
    """The files found, hashed; with `keep`, their bytes as hashed are kept with them."""
    import hashlib

    files, sums, kept = [], {}, []
    for rel, where, info in found:
        path = Path(where)
        if keep:
            data = file_bytes(path, rel)
            sums[rel] = hashlib.sha256(data).hexdigest()
            kept.append(data)
        else:
            sums[rel] = file_sha256(path, rel)
        files.append(StartFile(rel, path, info.st_size, bool(info.st_mode & 0o111)))
    return Starting(tuple(files), sums, digest_of(sums), tuple(kept) if keep else None)


def digest_of(sums: dict[str, str]) -> str:
    """The canonical digest of a tree: its file names and their sha256, sorted by name."""
    return sha256_bytes(dumps(sorted(sums.items())))


class CopyError(Exception):
    """Files could not be copied as they were hashed (the message says which)."""


Stamps = dict[str, tuple[int, int, int, int]]


def stamp_of(info: os.stat_result) -> tuple[int, int, int, int]:
    """What changes when a file is written, replaced or chmod-ed: inode, size, mtime, ctime."""
    return info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns


def copy_in(start: Starting, fd: int, replace: bool = False) -> Stamps:
    """Copy the files of `start` into the folder `fd`, checking each file's bytes against
    the digest it was hashed with; the stamp of each copy, by path. With `replace`, what is
    at a file's place is removed first (never written through); without, it must be free."""
    sums: dict[str, str] = {}
    stamps: Stamps = {}
    folders = Folders(fd, make=True)
    try:
        if start.kept is not None:          # the very bytes hashed: nothing to check again
            for item, data in zip(start.files, start.kept, strict=True):
                stamps[item.rel] = _write_one(item, data, folders, replace)
            return stamps
        for item in start.files:
            sums[item.rel], stamps[item.rel] = _copy_one(item, folders, replace)
    finally:
        folders.close()
    if digest_of(sums) != start.digest:
        changed = sorted(rel for rel, digest in sums.items() if start.sha256.get(rel) != digest)
        raise CopyError(f"file(s) changed while smevals read them: {', '.join(changed)}")
    return stamps


TICK = ""       # the entry of `past_tick` in a copy's stamps (never a file's path)


def past_tick(fd: int, stamps: Stamps) -> None:
    """Wait until a file made in the folder `fd` gets a later ctime than every copy in
    `stamps`, and note that time in them: any write after this changes a copy's ctime, so
    `settle` trusts every copy's stamp. (Without it, the copies made in the copy's last
    clock tick are read again, since a write in that tick could leave their ctime as it
    was; the faster the copy, the more of them there are.)"""
    import time
    import uuid

    last = max((s[3] for s in stamps.values()), default=None)
    name = f".smevals-tick-{uuid.uuid4().hex[:12]}"
    while last is not None:
        probe = os.open(name, _NEW, 0o600, dir_fd=fd)
        try:
            now = os.fstat(probe).st_ctime_ns
        finally:
            os.close(probe)
            os.unlink(name, dir_fd=fd)
        if now > last:
            stamps[TICK] = (0, 0, 0, now)
            return
        time.sleep(0.0005)


def _place(item: StartFile, folders: Folders, replace: bool) -> tuple[int, str]:
    """The folder (a descriptor) and name a starting file goes to, any file there removed
    first when `replace`."""
    try:
        here, name = folders.at(item.rel)
    except OSError as exc:
        raise CopyError(f"'{item.rel}' cannot be placed: {exc.strerror or exc}") from None
    if replace:
        remove(here, name)
    return here, name


def _write_one(item: StartFile, data: bytes, folders: Folders,
               replace: bool) -> tuple[int, int, int, int]:
    """Write a starting file from the bytes kept of it; its stamp."""
    here, name = _place(item, folders, replace)
    out = os.open(name, _NEW, 0o755 if item.executable else 0o644, dir_fd=here)
    try:
        write_all(out, data)
        return stamp_of(os.fstat(out))
    finally:
        os.close(out)


def _copy_one(item: StartFile, folders: Folders,
              replace: bool) -> tuple[str, tuple[int, int, int, int]]:
    here, name = _place(item, folders, replace)
    try:
        source, _info = open_regular(str(item.source))
    except OSError as exc:
        raise CopyError(f"'{item.rel}' cannot be read: {exc}") from None
    try:
        out = os.open(name, _NEW, 0o755 if item.executable else 0o644, dir_fd=here)
        try:
            digest = hash_copy(source, out)[1]
            return digest, stamp_of(os.fstat(out))
        finally:
            os.close(out)
    finally:
        os.close(source)


def _open_start(path: Path, rel: str) -> tuple[int, os.stat_result]:
    """A starting file opened for reading (never through a link), or WorkspaceError."""
    try:
        return open_regular(str(path))
    except NotRegular as exc:
        raise WorkspaceError(f"'{rel}' is {exc}") from None
    except OSError as exc:
        raise WorkspaceError(f"'{rel}' cannot be read: {exc.strerror or exc}") from None


def file_bytes(path: Path, rel: str) -> bytes:
    """The bytes of a starting file (read to its end, never through a link)."""
    fd, info = _open_start(path, rel)
    try:
        chunks = []
        while chunk := os.read(fd, max(info.st_size + 1, 1 << 16)):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def file_sha256(path: Path, rel: str) -> str:
    fd, _info = _open_start(path, rel)
    try:
        return hash_copy(fd, None)[1]
    finally:
        os.close(fd)
