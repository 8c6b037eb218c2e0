"""The judge cache: model-judge responses kept in the store, found by request, named by content.

```
<store>/judges/<first 2 hex of key>/<key>.<first 12 hex of the record's sha256>.json
```

`key` is the sha256 of the canonical JSON of the exact request (backend, endpoint, model,
messages, parameters; never a key or a header). The file is a canonical JSON record
`{"format", "kind": "judge", "request", "response", "created"}`, written once (staged,
fsynced, linked into place so it never replaces an entry) and read-only afterwards.

The second part of the name is the start of the sha256 of the file's own bytes, as an
object id is, so an edited response (even one written back in canonical form) no longer
hashes to its name: `verify` names it, `merge` refuses it, and a lookup leaves it out (the
judge is asked again) and notes it as damage.

A request may have several entries (`--no-judge-cache` asked it afresh, two writers at once,
two merged shards or branches): the newest sound one answers, by its recorded `created` time
(UTC), ties broken by the greater file name, so every clone of a merge serves the same answer
whatever the order of the merge. Older entries stay as evidence until `smevals gc
--judge-cache` evicts them. Lookups are O(1): each bucket folder is listed once per process,
and again on a miss.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from smevals import scope
from smevals.files.canonical import dumps, loads, sha256_bytes
from smevals.files.regular import read_record
from smevals.files.workspace import write_all
from smevals.store import locks
from smevals.store.folders import named, open_folder
from smevals.store.layout import HASH_PREFIX, STAGING
from smevals.store.records import JudgeEntry, JudgeRequest, JudgeResponse
from smevals.store.write import host_name, ignore_in_git

FOLDER = "judges"
FORMAT = 1
_NAME = re.compile(rf"^([0-9a-f]{{64}})\.([0-9a-f]{{{HASH_PREFIX}}})\.json$")
_OLD_NAME = re.compile(r"^[0-9a-f]{64}\.json$")
STRAY = (f"stray entry in the judge cache (only <2 hex>/<sha256 of the request>."
         f"<{HASH_PREFIX} hex of the record's sha256>.json files belong)")
OLD = ("an entry of the old layout (<sha256 of the request>.json): its answer cannot be "
       "checked, so it is never served; delete it (`smevals grade` asks the judge again)")


def request_key(request: JudgeRequest) -> str:
    return sha256_bytes(dumps(request))


def entry_name(key: str, data: bytes) -> str:
    """The file name of the entry for request `key` whose record bytes are `data`."""
    return f"{key}.{sha256_bytes(data)[:HASH_PREFIX]}.json"


def lookup(root: Path, request: JudgeRequest) -> JudgeResponse | None:
    """The stored response of `request`, or None (absent, or every entry damaged)."""
    found = _find(root, request)
    return found[1]["response"] if found else None


def has(root: Path, request: JudgeRequest) -> bool:
    return lookup(root, request) is not None


def _find(root: Path, request: JudgeRequest) -> tuple[Path, JudgeEntry] | None:
    """(path, record) of the newest sound entry of `request`; damaged ones noted and
    skipped."""
    from smevals.store import damage

    key = request_key(request)
    folder = root / FOLDER / key[:2]
    fresh = False
    while True:
        names, fresh = _names(folder, key, fresh)
        sound = []
        for name in names:
            _data, record, problems = check_entry(folder / name)
            if problems:
                damage.note(str(root), f"{FOLDER}/{key[:2]}/{name}", "; ".join(problems))
            elif record is not None and record["request"] == request:
                sound.append((newness(record, name), folder / name,
                              cast(JudgeEntry, record)))      # checked: a sound entry
        if sound:
            _when, path, entry = max(sound, key=lambda found: found[0])
            return path, entry
        if fresh:
            return None
        fresh = True


def created_at(record: dict[str, Any]) -> datetime | None:
    """When an entry was stored (its `created` time), or None when it has no valid one."""
    from smevals.store.layout import parse_iso

    try:
        return parse_iso(str(record.get("created"))).astimezone(UTC)
    except ValueError:
        return None


def newness(record: dict[str, Any], name: str) -> tuple[datetime, str]:
    """How an entry orders among the entries of its request: by `created`, then by file
    name; an entry without a valid time is older than any with one."""
    return created_at(record) or _NEVER, name


_NEVER = datetime.min.replace(tzinfo=UTC)


def _names(folder: Path, key: str, fresh: bool) -> tuple[list[str], bool]:
    """(entry names of request `key`, listed afresh?): the bucket's listing of this command
    (smevals/scope.py), or a new one when `fresh` or none was made yet."""
    command = scope.current()
    with command.lock:
        listed = None if fresh else command.judge_listings.get(folder)
    if listed is None:
        fresh, listed = True, {}
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                listed.setdefault(name.split(".", 1)[0], []).append(name)
        with command.lock:
            command.judge_listings[folder] = listed
    return sorted(listed.get(key, ())), fresh


def keep(root: Path, request: JudgeRequest, response: JudgeResponse, created: str) -> Path:
    """Store `response` for `request` as its newest entry (a no-op when the newest sound
    entry already holds the same answer); the path of the entry that answers now."""
    found = _find(root, request)
    if found is not None and found[1]["response"].get("content") == response.get("content"):
        return found[0]
    entry: JudgeEntry = {"format": FORMAT, "kind": "judge", "request": request,
                         "response": response, "created": created}
    data = dumps(entry)
    key = request_key(request)
    return copy_entry(root, f"{key[:2]}/{entry_name(key, data)}", data)


def copy_entry(root: Path, rel: str, data: bytes) -> Path:
    """Write the entry `<bucket>/<name>` holding `data` (checked by the caller), unless it is
    there: staged, fsynced, then linked into place, so no reader sees half of it."""
    dest = root / FOLDER / rel
    if dest.exists():
        return dest
    staging = root / STAGING
    os.close(open_folder(root, STAGING))    # real folders, never links (store.folders)
    ignore_in_git(staging)
    tmp = staging / f"judge-{host_name()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    try:
        locks.hold(fd)                  # a live write, as staging folders are (gc, verify)
        write_all(fd, data)
        os.fsync(fd)
        _link_into(root, tmp.name, f"{FOLDER}/{rel}")
    finally:
        tmp.unlink(missing_ok=True)
        os.close(fd)
    command = scope.current()
    with command.lock:
        command.judge_listings.pop(dest.parent, None)
    return dest


def _link_into(root: Path, name: str, rel: str) -> None:
    """Link the staged file `name` to `rel` (unless an entry is there: never replaced),
    every folder on the way entered without following a link."""
    folder, _, leaf = rel.rpartition("/")
    source = open_folder(root, STAGING, create=False)
    try:
        target = open_folder(root, folder)
        try:
            with contextlib.suppress(FileExistsError), named(root / folder):
                os.link(name, leaf, src_dir_fd=source, dst_dir_fd=target)
                os.fsync(target)
        finally:
            os.close(target)
    finally:
        os.close(source)


def entry_bytes(root: Path, request: JudgeRequest) -> tuple[str, bytes] | None:
    """(key, the entry file's bytes) of `request`'s sound entry, for sending elsewhere."""
    found = _find(root, request)
    if found is None:
        return None
    try:
        return request_key(request), found[0].read_bytes()
    except OSError:
        return None


def accept(root: Path, key: str, data: bytes) -> bool:
    """Keep an entry sent from elsewhere (a Dask worker, or the client to a worker) when it
    is a canonical judge record whose request hashes to `key`, byte for byte under the name
    its content gives; False (nothing written) when not."""
    try:
        record = loads(data)
    except ValueError:
        return False
    if not re.fullmatch(r"[0-9a-f]{64}", key) or not isinstance(record, dict) \
            or record.get("kind") != "judge" or not isinstance(record.get("request"), dict) \
            or not isinstance(record.get("response"), dict) or dumps(record) != data \
            or request_key(record["request"]) != key:
        return False
    copy_entry(root, f"{key[:2]}/{entry_name(key, data)}", data)
    return True


def entries(root: Path) -> Iterator[tuple[str, Path | None]]:
    """(path relative to the store root, file or None for a stray) of every cache entry."""
    base = root / FOLDER
    if not base.is_dir():
        return
    for bucket in sorted(os.listdir(base)):
        folder = base / bucket
        if not folder.is_dir() or folder.is_symlink():
            yield f"{FOLDER}/{bucket}", None
            continue
        for name in sorted(os.listdir(folder)):
            yield f"{FOLDER}/{bucket}/{name}", folder / name


def entry_problems(rel: str, path: Path | None) -> list[str]:
    """Why one cache entry is damaged (an empty list when it is sound)."""
    return [STRAY] if path is None else check_entry(path)[2]


def check_entry(path: Path) -> tuple[bytes | None, dict[str, Any] | None, list[str]]:
    """(bytes, record, problems) of one entry; no problem when it is sound (or just gone)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None, None, []
    except OSError as exc:
        return None, None, [f"unreadable judge cache entry: {exc}"]
    misplaced = _misplaced(path.parent.name, path.name, stat.S_ISREG(mode))
    if misplaced:
        return None, None, misplaced
    try:
        data = read_record(str(path))[1]
    except OSError as exc:
        return None, None, [f"unreadable judge cache entry: {exc}"]
    record, problems = check_bytes(path.name, data)
    return data, record, problems


def committed_problems(rel: str, regular: bool, data: bytes | str | None) -> list[str]:
    """Why one file under `judges/` at a git revision (`rel` from the store's root) is not a
    sound cache entry, as `entry_problems` says it of a file in the working tree: `data` is
    its bytes, a str saying why they were not read (above the record limit), or None."""
    parts = rel.split("/")
    if len(parts) != 3:
        return [STRAY]
    misplaced = _misplaced(parts[1], parts[2], regular)
    if misplaced:
        return misplaced
    if not isinstance(data, bytes):
        return [f"unreadable judge cache entry: {data or 'not in the revision'}"]
    return check_bytes(parts[2], data)[1]


def _misplaced(bucket: str, name: str, regular: bool) -> list[str]:
    """Why a file is no entry by its place, name and type (an empty list when it may be)."""
    if _NAME.match(name) is None or bucket != name[:2] or not regular:
        return [OLD if _OLD_NAME.match(name) and regular else STRAY]
    return []


def check_bytes(name: str, data: bytes) -> tuple[dict[str, Any] | None, list[str]]:
    """(record, problems) of an entry named `name` holding `data`."""
    match = _NAME.match(name)
    assert match is not None
    try:
        record = loads(data)
    except ValueError as exc:
        return None, [f"unreadable judge cache entry: {exc}"]
    if not isinstance(record, dict) or record.get("kind") != "judge" \
            or not isinstance(record.get("request"), dict) \
            or not isinstance(record.get("response"), dict):
        return None, ["not a judge cache record (needs kind 'judge', a request and a "
                      "response)"]
    return record, _hash_problems(data, record, match.group(1), match.group(2))


def _hash_problems(data: bytes, record: dict[str, Any], key: str, digest: str) -> list[str]:
    out = []
    if dumps(record) != data:
        out.append("not in canonical form (edited by hand?)")
    got = sha256_bytes(data)[:HASH_PREFIX]
    if got != digest:
        out.append(f"the record hashes to {got}, not {digest} as the file name says "
                   "(edited by hand?)")
    asked = request_key(record["request"])
    if asked != key:
        out.append(f"its request hashes to {asked[:12]}, not {key[:12]} as the file name says "
                   "(edited or renamed)")
    return out
