"""What a grader reads of a Run: a private copy of its folder, checked as `verify` checks it.

Every file is opened once, without following a link and without blocking, read, hashed and
written into a private folder from the same bytes; the copy is then checked against the
record (hash, folder, manifest) exactly as `verify` checks an object. A checker then reads
the copy, which nothing else can change, never the store's files, so what was checked is
what is graded: a symlinked `output.txt` is never followed, and a file edited or swapped
while grading is not read.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from smevals.files.regular import NotRegular, open_regular, read_regular
from smevals.files.workspace import hash_copy, open_dir
from smevals.store.base import Entry, Scanned
from smevals.store.layout import RECORD_NAMES


class Damaged(Exception):
    """The object fails a check `verify` makes (the message says which, with the paths)."""

    def __init__(self, rel: str, why: str):
        super().__init__(f"{rel}: {why}")
        self.rel = rel
        self.why = why


def checked_copy(root: Path, kind: str, rel: str, dest: Path) -> None:
    """Copy the object `rel` of the store at `root` into the empty private folder `dest` and
    check the copy against its record; raises Damaged when `verify` would reject it."""
    from smevals.store.verify import check_object

    name = RECORD_NAMES[kind]
    try:
        fd = open_dir(os.path.join(root, rel))
    except OSError as exc:
        raise Damaged(rel, f"the object folder cannot be opened ({exc.strerror})") from None
    try:
        record = _record(fd, name)
        entries = sorted(_copy_tree(fd, dest, "", skip=name))
    finally:
        os.close(fd)
    if isinstance(record, bytes):       # the bytes checked, not a second read
        (dest / name).write_bytes(record)
        os.chmod(dest / name, 0o444)
    _parsed, problems = check_object(kind, Scanned(rel, record, entries))
    if problems:
        raise Damaged(rel, "; ".join(f"{p.path[len(rel) + 1:] or 'folder'}: {p.message}"
                                     for p in problems))


def _record(folder: int, name: str) -> bytes | str | None:
    try:
        fd, _info = open_regular(name, folder)
    except NotRegular as exc:
        return f"{name} is {exc}"
    except OSError:
        return None
    with os.fdopen(fd, "rb", buffering=0) as handle:
        return handle.readall()


def _copy_tree(folder: int, dest: Path, prefix: str, skip: str = "") -> list[Entry]:
    """Copy every entry of the open folder but `skip` into `dest`: regular files by their
    bytes, links as links, sub-folders likewise; anything else is listed (as `special`, as
    `verify` lists it), never opened (a socket cannot be) nor copied."""
    out: list[Entry] = []
    for name in sorted(os.listdir(folder)):
        if name == skip:
            continue
        inner = prefix + name
        try:
            info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except OSError:
            out.append(Entry(inner, -1, "", None))
            continue
        if stat.S_ISDIR(info.st_mode):
            out += _copy_folder(folder, name, dest / name, inner)
        elif stat.S_ISLNK(info.st_mode):
            target = os.readlink(name, dir_fd=folder)
            os.symlink(target, dest / name)
            out.append(Entry(inner, 0, None, target))
        elif not stat.S_ISREG(info.st_mode):
            out.append(Entry(inner, 0, None, None))     # a FIFO, socket or device: never opened
        else:
            out.append(_copy_file(folder, name, dest / name, inner))
    return out


def _copy_folder(folder: int, name: str, dest: Path, inner: str) -> list[Entry]:
    try:
        fd = open_dir(name, dir_fd=folder)
    except OSError:
        return [Entry(inner, -1, "", None)]
    try:
        dest.mkdir(mode=0o700)
        return _copy_tree(fd, dest, inner + "/")
    finally:
        os.close(fd)


def _copy_file(folder: int, name: str, dest: Path, inner: str) -> Entry:
    """A regular file copied from one open descriptor; a special file is listed only."""
    try:
        fd, info = open_regular(name, folder)
    except NotRegular:
        return Entry(inner, 0, None, None)
    except OSError:
        return Entry(inner, -1, "", None)
    try:
        with open(dest, "xb") as out:
            size, digest = hash_copy(fd, out.fileno(), hint=info.st_size)
    finally:
        os.close(fd)
    os.chmod(dest, stat.S_IMODE(info.st_mode) & 0o555)
    return Entry(inner, size, digest, None)


def read_checked(root: Path, rel: str, record: Mapping[str, object], name: str) -> bytes:
    """The bytes of one file of an object, read once without following a link and checked
    against its entry in the record's manifest (size and sha256); raises Damaged."""
    files = record.get("files")
    want = next((f for f in files if isinstance(f, dict) and f.get("path") == name), None) \
        if isinstance(files, list) else None
    if want is None or "sha256" not in want:
        raise Damaged(rel, f"{name}: not a regular file listed in the record")
    try:
        _info, data = read_regular(os.path.join(root, rel, name))
    except OSError as exc:
        raise Damaged(rel, f"{name}: cannot be read ({exc})") from None
    if len(data) != want.get("size"):
        raise Damaged(rel, f"{name}: size changed: {want.get('size')} bytes recorded, "
                      f"{len(data)} found")
    if hashlib.sha256(data).hexdigest() != want["sha256"]:
        raise Damaged(rel, f"{name}: content changed: sha256 does not match the record")
    return data
