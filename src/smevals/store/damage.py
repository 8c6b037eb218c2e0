"""Damage that readers leave out: what `verify` would reject and a reader can see cheaply.

When a record is parsed: it must hash to its object's id, its folder's time and place must
follow from the record (the `started` or `graded` time, the names it is filed under), and
it must match its schema (the index cache keeps this verdict with the record, keyed by the
file's stat stamp and the folder, or by git blob id and folder, so a changed or moved
record is always checked again). On every read: every file the record lists must be in the
folder as listed, a regular file of the recorded size, a symlink, or a special file
(`files_problem`, and gitsource.py for a git revision, which must also hold no other file).
A file's full sha256 is checked by `verify` and before grading (checkedcopy.py).

Every object left out is noted on the running command (smevals/scope.py), so that the
command line can say so once, pointing at `smevals verify`.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from datetime import datetime
from typing import Any

from smevals import scope
from smevals.files.regular import what
from smevals.store.layout import (
    ID_RE,
    RECORD_NAMES,
    STAMP_FIELDS,
    object_parent,
    parse_iso,
    record_names,
    timestamp,
)

Listed = tuple[Any, ...]    # (path, size, path, size...): size -1 a symlink, -2 special


def problem(kind: str, rel: str, data: bytes, record: dict[str, Any]) -> str | None:
    """Why a parsed record of the object folder `rel` cannot be counted, or None."""
    name = RECORD_NAMES[kind]
    parent, _, oid = rel.rpartition("/")
    match = ID_RE.match(oid)
    if match is None:
        return f"folder name '{oid}' is not an object id (<timestamp>-<hash>)"
    if not hashlib.sha256(data).hexdigest().startswith(match.group(2)):
        return f"{name} does not hash to the object's id (edited by hand?)"
    return schema_problem(kind, record) or folder_problem(kind, parent, match.group(1), record)


def folder_problem(kind: str, parent: str, stamp: str, record: dict[str, Any]) -> str | None:
    """Why the folder's time or place does not follow from a (schema-valid) record."""
    field = STAMP_FIELDS[kind]
    text = str(record.get(field))
    if not same_time(stamp, text):
        return f"folder timestamp {stamp} does not match the record's {field} " \
               f"({utc_stamp(text)})"
    names = record_names(kind, record)
    want = _parent(kind, tuple(str(n) for n in names)) if names is not None else None
    if want is not None and parent and want != parent:
        return f"filed under {parent}, but its record belongs under {want}"
    return None


def same_time(stamp: str, text: str) -> bool:
    """Whether the ISO time `text` is the folder timestamp `stamp` (`20260102T030405Z`):
    a UTC time as smevals writes it is compared by its digits, any other parsed."""
    head = f"{stamp[0:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}"
    tail = text[19:]
    if text.startswith(head) and (tail in ("Z", "+00:00") or _FRACTION.match(tail)):
        try:
            datetime.fromisoformat(head)            # a real date and time
        except ValueError:
            return False
        return True
    return utc_stamp(text) == stamp


_FRACTION = re.compile(r"\.[0-9]{1,6}(?:Z|\+00:00)\Z")


def utc_stamp(text: str) -> str:
    """The folder timestamp of an ISO time, "invalid" when it is not one."""
    try:
        return timestamp(parse_iso(text))
    except (ValueError, TypeError, OverflowError):
        return "invalid"


@functools.lru_cache(maxsize=65536)
def _parent(kind: str, names: tuple[str, ...]) -> str | None:
    try:
        return object_parent(kind, list(names))
    except ValueError:
        return None


def listed(record: dict[str, Any]) -> Listed:
    """The files a (schema-valid) record lists, for `files_problem`."""
    out: list[Any] = []
    for entry in record.get("files") or ():
        size = entry.get("size")
        kind = -1 if "symlink" in entry else -2 if entry.get("special") else size
        out += (entry.get("path"), kind if isinstance(kind, int) else -3)
    return tuple(out)


def files_problem(folder: str, files: Listed) -> str | None:
    """Why the files of the object `folder` are not the ones its record lists (by type and
    size; one lstat each), or None."""
    for i in range(0, len(files), 2):
        path, size = files[i], files[i + 1]
        try:
            mode = os.lstat(f"{folder}/{path}")
        except (OSError, ValueError):
            return f"{path}: missing: listed in the record but not in the folder"
        found = file_problem(path, size, mode.st_mode, mode.st_size)
        if found:
            return found
    return None


def file_problem(path: str, size: int, mode: int, found: int) -> str | None:
    """Why a file of type `mode` and size `found` is not the one listed as `size`."""
    if size >= 0:
        if not stat.S_ISREG(mode):
            return f"{path}: {what(mode)} where the record lists a regular file"
        if found != size:
            return f"{path}: size changed: {size} bytes recorded, {found} found"
    elif size == -1 and not stat.S_ISLNK(mode):
        return f"{path}: the record lists a symlink, not what is found"
    elif size == -2 and (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        return f"{path}: special file replaced by a regular file or a symlink"
    return None


def schema_problem(kind: str, record: dict[str, Any]) -> str | None:
    """The first place where the record breaks its JSON Schema, or None."""
    from smevals.schemas import packaged

    found = packaged(kind).first(record)
    if found is None:
        return None
    return f"{RECORD_NAMES[kind]} does not match {kind}.schema.json at '{found.slashed}': " \
           f"{found.message}"


def note(label: str, rel: str, why: str) -> None:
    """Remember an object left out by a reader, for the running command."""
    scope.current().note_damaged(label, rel, why)


def found() -> list[tuple[str, str, str]]:
    """(store label, object rel, why) of every object the running command left out so far,
    sorted."""
    return scope.current().found_damaged()


def as_json(label: str) -> list[dict[str, str]]:
    """The objects of one store left out so far, for JSON output."""
    return [{"path": rel, "problem": why} for lab, rel, why in found() if lab == label]
