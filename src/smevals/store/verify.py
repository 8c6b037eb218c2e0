"""Recompute every hash and report every problem with its path (nothing stops at the first).

Like `git fsck`: each object is re-hashed from its folder alone and compared with its name,
every file with the record's manifest; then references are checked (every Grade's Run).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smevals.files.canonical import dumps, loads
from smevals.store import folders
from smevals.store.base import Entry, Scanned, Source
from smevals.store.damage import utc_stamp
from smevals.store.folders import NotAFolder
from smevals.store.fssource import FsSource
from smevals.store.gitsource import GitSource
from smevals.store.layout import (
    ID_RE,
    KINDS,
    RECORD_NAMES,
    STAMP_FIELDS,
    object_parent,
    record_names,
)
from smevals.store.leftovers import staging_folders


@dataclass(frozen=True)
class Damage:
    path: str        # relative to the store root
    message: str


def verify_store(root: Path, rev: str | None = None) -> tuple[int, list[Damage]]:
    """(objects checked, problems) for the store at `root` (or as committed at `rev`)."""
    source: Source = GitSource(root, rev) if rev else FsSource(root)
    problems: list[Damage] = [] if rev else folder_problems(root) + list(staging_leftovers(root))
    runs: set[str] = set()
    links: list[tuple[str, str]] = []
    folders: dict[str, list[str]] = {}
    count = 0
    for kind in KINDS:
        problems += [Damage(p, "stray entry outside any object folder")
                     for p in source.strays(kind)]
        for scanned in source.scan(kind):
            count += 1
            record, found = check_object(kind, scanned)
            problems += found + shared_folder(kind, scanned.rel, record, folders)
            if kind == "run":
                runs.add(scanned.rel)
            elif record is not None:
                links.append((scanned.rel, _run_rel(record)))
    problems += [Damage(rel, f"the Run it grades is missing: {run}")
                 for rel, run in links if run not in runs]
    judged, damage = committed_judge_problems(source) if isinstance(source, GitSource) \
        else judge_cache_problems(root)
    count += judged
    problems += damage
    return count, problems


def folder_problems(root: Path) -> list[Damage]:
    """The store's own folders (`runs/`, `grades/`, `judges/`, `.staging/`) that are there
    but are no real folder: a link would send reads and writes outside the store."""
    return [Damage(rel, why) for rel, why in folders.problems(root)]


def judge_cache_problems(root: Path) -> tuple[int, list[Damage]]:
    """(entries checked, problems) of the judge cache: each request, and each whole
    record, must hash to its name."""
    from smevals.store import judgecache

    count, out = 0, []
    for rel, path in judgecache.entries(root):
        count += path is not None
        out += [Damage(rel, message) for message in judgecache.entry_problems(rel, path)]
    return count, out


def committed_judge_problems(source: GitSource) -> tuple[int, list[Damage]]:
    """The judge cache as committed at the revision, checked as `judge_cache_problems`
    checks it in the working tree."""
    from smevals.store import judgecache

    count, out, seen = 0, [], set()
    for rel, regular, data in source.judge_entries():
        entry = "/".join(rel.split("/")[:3])    # a folder in a bucket: named once, as a folder
        if entry in seen:
            continue
        seen.add(entry)
        count += entry.count("/") == 2          # what is in a bucket, as in the working tree
        problems = judgecache.committed_problems(rel, regular and entry == rel, data)
        out += [Damage(entry, message) for message in problems]
    return count, out


def shared_folder(kind: str, rel: str, record: dict[str, Any] | None,
                  folders: dict[str, list[str]]) -> list[Damage]:
    """Objects of two different names in one folder (their folder names collide)."""
    names = record_names(kind, record) if record is not None else None
    if names is None:
        return []
    parent = rel.rpartition("/")[0]
    names = [str(n) for n in names]
    first = folders.setdefault(parent, names)
    if first == names:
        return []
    return [Damage(rel, f"its names {names} share the folder with {first} (a name collision)")]


def staging_leftovers(root: Path) -> Iterator[Damage]:
    """Staging folders no live process is writing (a live write is not a problem); a
    `.staging` that is no real folder is a problem of its own (folder_problems)."""
    try:
        found = staging_folders(root)
    except (NotAFolder, OSError):
        return
    for folder, writing in found:
        if not writing:
            yield Damage(f"{folder.parent.name}/{folder.name}", "staging leftover of an "
                         "interrupted write (`smevals gc` removes it)")


def _run_rel(record: dict[str, Any]) -> str:
    run = record.get("run")
    return str(run.get("rel", "")) if isinstance(run, dict) else ""


def check_object(kind: str, scanned: Scanned) -> tuple[dict[str, Any] | None, list[Damage]]:
    """(record or None, problems) of one object folder."""
    rel, data = scanned.rel, scanned.record
    name = RECORD_NAMES[kind]
    if data is None:
        return None, [Damage(rel, f"{name} is missing")]
    if isinstance(data, str):
        return None, [Damage(f"{rel}/{name}", data)]
    try:
        record = loads(data)
    except ValueError as exc:
        return None, [Damage(f"{rel}/{name}", f"unreadable {name}: {exc}")]
    if not isinstance(record, dict):
        return None, [Damage(f"{rel}/{name}", f"unreadable {name}: not a JSON object")]
    problems = name_problems(kind, rel, data, record)
    problems += schema_problems(kind, rel, record)
    problems += file_problems(rel, record.get("files"), scanned.files)
    return record, problems


def name_problems(kind: str, rel: str, data: bytes, record: dict[str, Any]) -> list[Damage]:
    """The folder's name and place must follow from the record: hash, timestamp, names."""
    name = RECORD_NAMES[kind]
    parent, _, oid = rel.rpartition("/")
    match = ID_RE.match(oid)
    if not match:
        return [Damage(rel, f"folder name '{oid}' is not an object id (<timestamp>-<hash>)")]
    out = []
    if dumps(record) != data:
        out.append(Damage(f"{rel}/{name}", f"{name} is not in canonical form (edited by hand?)"))
    digest = hashlib.sha256(data).hexdigest()
    if not digest.startswith(match.group(2)):
        out.append(Damage(rel, f"{name} hashes to {digest[:12]}, not {match.group(2)} as the "
                          "folder name says (record edited or folder renamed)"))
    stamp = utc_stamp(str(record.get(STAMP_FIELDS[kind])))
    if stamp != match.group(1):
        stamp = "missing or invalid" if stamp == "invalid" else stamp
        out.append(Damage(rel, f"folder timestamp {match.group(1)} does not match the record's "
                          f"{STAMP_FIELDS[kind]} ({stamp})"))
    names = record_names(kind, record)
    want = object_parent(kind, [str(n) for n in names]) if names is not None else parent
    if want != parent:
        out.append(Damage(rel, f"filed under {parent}, but its record belongs under {want}"))
    return out


def schema_problems(kind: str, rel: str, record: dict[str, Any]) -> list[Damage]:
    """Where the record breaks its JSON Schema (the first five places)."""
    from smevals.schemas import violations

    name = RECORD_NAMES[kind]
    return [Damage(f"{rel}/{name}", f"record does not match {kind}.schema.json at "
                   f"'{'/'.join(map(str, v.path))}': {v.message}")
            for v in violations(kind, record)[:5]]


def file_problems(rel: str, files: Any, found: list[Entry]) -> list[Damage]:
    """Every file of the record's manifest against the files found in the folder."""
    listed = {f["path"]: f for f in files or [] if isinstance(f, dict) and "path" in f}
    actual = {entry.path: entry for entry in found}
    out = []
    for path in sorted(set(listed) | set(actual)):
        if path not in actual:
            problem = "missing: listed in the record but not in the folder"
        elif path not in listed:
            problem = "extra file: in the folder but not listed in the record"
        else:
            problem = changed(listed[path], actual[path])
        if problem:
            out.append(Damage(f"{rel}/{path}", problem))
    return out


def changed(want: dict[str, Any], have: Entry) -> str:
    """Why a file differs from its manifest entry, or "" when it does not."""
    if "symlink" in want or have.link is not None:
        if want.get("symlink") == have.link:
            return ""
        return f"symlink changed: {want.get('symlink')!r} recorded, {have.link!r} found"
    if want.get("special"):
        return "" if have.sha256 is None else "special file replaced by a regular file"
    if have.sha256 is None:
        return "regular file replaced by a special file (a FIFO, socket or device)"
    if have.size < 0:
        return "cannot be read"
    if want.get("size") != have.size:
        return f"size changed: {want.get('size')} bytes recorded, {have.size} found"
    if want.get("sha256") != have.sha256:
        return "content changed: sha256 does not match the record"
    return ""
