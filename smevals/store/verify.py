"""Recompute every hash and report every problem with its path (nothing stops at the first)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smevals.store.canonical import dumps, loads
from smevals.store.layout import ID_RE, parse_iso, timestamp
from smevals.store.objects import RECORD_NAMES, STAGING, STAMP_FIELDS
from smevals.store.sources import DEPTH, FsSource, GitSource, Source


@dataclass(frozen=True)
class Damage:
    path: str        # relative to the store root
    message: str


def verify_store(root: Path, rev: str | None = None) -> tuple[int, list[Damage]]:
    """(objects checked, problems) for the store at `root` (or as committed at `rev`)."""
    source: Source = GitSource(root, rev) if rev else FsSource(root)
    problems: list[Damage] = [] if rev else list(staging_leftovers(root))
    runs: set[str] = set()
    count = 0
    grade_links: list[tuple[str, str]] = []
    for kind in ("run", "grade"):
        for rel, data in source.records(kind):
            count += 1
            record, found = check_object(source, kind, rel, data)
            problems.extend(found)
            if kind == "run":
                runs.add(rel)
            elif record and isinstance(record.get("run"), dict):
                grade_links.append((rel, str(record["run"].get("rel", ""))))
        problems.extend(_strays(root, kind) if not rev else [])
    problems.extend(Damage(rel, f"the Run it grades is missing: {run}")
                    for rel, run in grade_links if run not in runs)
    return count, problems


def staging_leftovers(root: Path) -> Iterator[Damage]:
    folder = root / STAGING
    if folder.is_dir():
        for entry in sorted(os.listdir(folder)):
            yield Damage(f"{STAGING}/{entry}", "staging leftover of an interrupted write "
                         "(`smevals gc` removes it)")


def check_object(source: Source, kind: str, rel: str, data: bytes) -> tuple[Any, list[Damage]]:
    name = RECORD_NAMES[kind]
    if not data:
        return None, [Damage(rel, f"{name} is missing or empty")]
    try:
        record = loads(data)
        assert isinstance(record, dict)
    except (ValueError, AssertionError):
        return None, [Damage(f"{rel}/{name}", f"unreadable {name}: not a JSON object")]
    problems = _name_problems(kind, rel, data, record)
    problems.extend(_schema_problems(kind, rel, record))
    problems.extend(_file_problems(source, rel, name, record.get("files")))
    return record, problems


def _name_problems(kind: str, rel: str, data: bytes, record: dict[str, Any]) -> list[Damage]:
    name = RECORD_NAMES[kind]
    oid = rel.rsplit("/", 1)[1]
    match = ID_RE.match(oid)
    if not match:
        return [Damage(rel, f"folder name '{oid}' is not an object id (<timestamp>-<hash>)")]
    out = []
    if dumps(record) != data:
        out.append(Damage(f"{rel}/{name}", f"{name} is not in canonical form (edited by hand?)"))
    digest = hashlib.sha256(data).hexdigest()
    if not digest.startswith(match.group(2)):
        out.append(Damage(rel, f"hash of {name} is {digest[:12]}, but the folder is named for "
                          f"{match.group(2)} (record edited or folder renamed)"))
    try:
        stamp = timestamp(parse_iso(str(record.get(STAMP_FIELDS[kind]))))
    except (ValueError, TypeError):
        stamp = None
    if stamp != match.group(1):
        out.append(Damage(rel, f"folder timestamp {match.group(1)} does not match the record's "
                          f"{STAMP_FIELDS[kind]} ({stamp})"))
    return out


def _schema_problems(kind: str, rel: str, record: dict[str, Any]) -> list[Damage]:
    from smevals.spec.schema import validator

    name = RECORD_NAMES[kind]
    errors = sorted(validator(kind).iter_errors(record), key=lambda e: list(map(str, e.path)))
    return [Damage(f"{rel}/{name}", f"record does not match {kind}.schema.json at "
                   f"'{'/'.join(map(str, e.absolute_path))}': {e.message}") for e in errors[:5]]


def _file_problems(source: Source, rel: str, name: str, files: Any) -> list[Damage]:
    listed = {f["path"]: f for f in files or [] if isinstance(f, dict) and "path" in f}
    actual = {p: (size, link) for p, size, link in source.listing(rel) if p != name}
    out = [Damage(f"{rel}/{p}", "file listed in the record is missing")
           for p in sorted(set(listed) - set(actual))]
    out += [Damage(f"{rel}/{p}", "extra file not listed in the record")
            for p in sorted(set(actual) - set(listed))]
    for path in sorted(set(listed) & set(actual)):
        problem = _changed(source, f"{rel}/{path}", listed[path], actual[path])
        if problem:
            out.append(Damage(f"{rel}/{path}", problem))
    return out


def _changed(source: Source, path: str, want: dict[str, Any], have: tuple[int, str | None]) -> str:
    size, link = have
    if "symlink" in want or link is not None:
        return "" if want.get("symlink") == link else "symlink changed"
    if want.get("size") != size and not isinstance(source, GitSource):
        return f"size changed: {want.get('size')} bytes recorded, {size} found"
    digest = hashlib.sha256(source.read(path)).hexdigest()
    if digest != want.get("sha256"):
        return "content changed: sha256 does not match the record"
    return ""


def _strays(root: Path, kind: str) -> list[Damage]:
    """Folders at the object depth without a record are reported by `records`; this finds
    files lying where only folders belong."""
    out = []
    base = root / f"{kind}s"
    for current, dirs, files in os.walk(base):
        depth = len(Path(current).relative_to(base).parts)
        if depth > DEPTH[kind]:
            dirs[:] = []
            continue
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            rel = Path(current, name).relative_to(root).as_posix()
            out.append(Damage(rel, "stray file outside any object"))
    return out
