"""`smevals merge`: copy into one store the objects of others that it lacks.

Objects are immutable and content-addressed, so merging shards is a union of folders.
Each source object is verified first (its record hashes to its id, is filed where its
names say, matches its schema, and every file matches its manifest); a damaged one is
refused and named, never copied. A copy is staged and renamed into place like every
write, so readers never see half an object and merging again copies nothing.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smevals.store.base import Scanned
from smevals.store.fssource import FsSource, read_or_none
from smevals.store.layout import KINDS, RECORD_NAMES
from smevals.store.verify import Damage, check_object
from smevals.store.write import Staging, StoreError, Written


@dataclass
class Merged:
    source: Path
    into: Path
    copied: int = 0
    present: int = 0
    refused: list[Damage] = field(default_factory=list)


def is_store(folder: Path) -> bool:
    return any((folder / f"{kind}s").is_dir() for kind in KINDS)


def store_pairs(source: Path, into: Path) -> list[tuple[Path, Path]]:
    """(source store, destination store): a store (it has runs/ or grades/) merges into
    `into`; a folder of stores (a --store folder, one per Eval) merges each into the
    sub-folder of the same name. Empty when `source` holds no store."""
    if is_store(source):
        return [(source, into)]
    try:
        subs = sorted(p for p in source.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []
    return [(sub, into / sub.name) for sub in subs if is_store(sub)]


def merge_store(source: Path, into: Path) -> Merged:
    """Copy every sound object of `source` missing from `into` (Runs before Grades). What
    is not an object folder (a symlink, a file, a hidden folder among them) is refused and
    named; so is a Grade whose Run is neither in `into` nor copied there."""
    result = Merged(source, into)
    found = FsSource(source)
    for kind in KINDS:
        name = RECORD_NAMES[kind]
        result.refused += [Damage(rel, _STRAY) for rel in found.strays(kind)]
        for rel in found.objects(kind):
            data = read_or_none(os.path.join(source, rel, name))
            have = read_or_none(os.path.join(into, rel, name))
            if have is not None and have == data:
                result.present += 1
                continue
            scanned = Scanned(rel, data, found._files(rel, name, hashed=True))
            _merge_one(kind, scanned, have, result)
    _merge_judges(source, into, result)
    return result


_STRAY = "not an object folder (a symlink, a file or a hidden folder): not copied"


def _run_missing(record: dict[str, Any] | None, result: Merged) -> str | None:
    """Why a Grade cannot be copied for want of its Run in the destination, or None."""
    run = record.get("run") if record is not None else None
    rel = str(run.get("rel", "")) if isinstance(run, dict) else ""
    if rel and os.path.isfile(os.path.join(result.into, rel, RECORD_NAMES["run"])):
        return None
    return f"the Run it grades is not in {result.into} (refused or missing): {rel}"


def _merge_judges(source: Path, into: Path, result: Merged) -> None:
    """Copy the judge cache entries `into` lacks, each checked first (its request and its
    whole record hash to its name); the bytes checked are the bytes written, as `grade`
    writes them, so a reader never sees half an entry."""
    from smevals.store import judgecache

    for rel, path in judgecache.entries(source):
        data, _record, problems = judgecache.check_entry(path) if path else \
            (None, None, [judgecache.STRAY])
        if problems:
            result.refused.append(Damage(rel, "; ".join(problems)))
            continue
        if data is None or os.path.lexists(into / rel):     # gone meanwhile, or there
            result.present += data is not None
            continue
        judgecache.copy_entry(into, rel.split("/", 1)[1], data)
        result.copied += 1


def _merge_one(kind: str, scanned: Scanned, have: bytes | str | None, result: Merged) -> None:
    parsed, problems = check_object(kind, scanned)
    if not problems and kind == "grade":
        problems = [Damage(scanned.rel, why) for why in [_run_missing(parsed, result)] if why]
    if problems:
        result.refused.append(Damage(scanned.rel, "; ".join(
            f"{p.path[len(scanned.rel) + 1:] or 'folder'}: {p.message}" for p in problems)))
        return
    if have is not None or os.path.lexists(result.into / scanned.rel):
        result.refused.append(Damage(scanned.rel, "a different object with this id is already "
                                     f"in {result.into} (run `smevals verify` there)"))
        return
    record = scanned.record
    assert isinstance(record, bytes)        # check_object refuses a missing or odd record
    folder = result.source / scanned.rel
    try:
        written = copy_in(result.into, kind, scanned.rel, record,
                          lambda dest: _copy_files(folder, dest, _entries(record)))
    except StoreError as exc:
        result.refused.append(Damage(scanned.rel, str(exc)))
        return
    result.copied += not written.existed
    result.present += written.existed


def copy_in(root: Path, kind: str, rel: str, data: bytes,
            fill: Callable[[Path], None]) -> Written:
    """Write one object copied from elsewhere: `fill` puts its files in a staging folder,
    then the store checks them against the record `data` and renames the folder into
    place (Staging.commit_copy). Raises StoreError when they do not match, OSError when
    the disk does (full, read-only)."""
    staging = Staging(root, kind)
    try:
        fill(staging.dir)
        return staging.commit_copy(data, rel)
    finally:
        staging.abort()


def _entries(data: bytes | None) -> list[dict[str, Any]]:
    from smevals.files.canonical import loads

    record = loads(data or b"{}")
    return [f for f in record.get("files") or [] if isinstance(f, dict)]


def _copy_files(source: Path, dest: Path, entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        path = safe_inner(str(entry.get("path", "")))
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if "symlink" in entry:
            os.symlink(str(entry["symlink"]), target)
        elif entry.get("special"):      # a record says only "special": any such file is one
            os.mkfifo(target, 0o600)
        else:
            shutil.copy(source / path, target, follow_symlinks=False)


def safe_inner(path: str) -> str:
    """A file path inside an object: relative, no `..`, no empty part (else StoreError)."""
    parts = path.split("/")
    if not path or path.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise StoreError(f"'{path}' is not a path inside an object")
    return path
