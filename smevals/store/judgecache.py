"""The judge cache: model-judge responses kept in the store, content-addressed by request.

```
<store>/judges/<first 2 hex of key>/<key>.json
```

`key` is the sha256 of the canonical JSON of the exact request (backend, endpoint, model,
messages, parameters; never a key or a header). The file is a canonical JSON record
`{"format", "kind": "judge", "request", "response", "created"}`, written once (staged,
fsynced, linked into place so it never replaces an entry) and read-only afterwards.
`verify` re-hashes each request against the file name.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from smevals.store.canonical import dumps, loads, sha256_bytes
from smevals.store.layout import STAGING
from smevals.store.objects import _fsync_dir, _ignore_in_git, _make_parents, host_name

try:
    import fcntl
except ImportError:                      # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

FOLDER = "judges"
FORMAT = 1
_KEY = re.compile(r"^[0-9a-f]{64}$")


def request_key(request: dict[str, Any]) -> str:
    return sha256_bytes(dumps(request))


def entry_path(root: Path, key: str) -> Path:
    return root / FOLDER / key[:2] / f"{key}.json"


def lookup(root: Path, request: dict[str, Any]) -> dict[str, Any] | None:
    """The stored response of `request`, or None (absent, unreadable or not this request's)."""
    key = request_key(request)
    try:
        record = loads(entry_path(root, key).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("request") != request:
        return None
    response = record.get("response")
    return response if isinstance(response, dict) else None


def has(root: Path, request: dict[str, Any]) -> bool:
    return lookup(root, request) is not None


def keep(root: Path, request: dict[str, Any], response: dict[str, Any], created: str) -> str:
    """Store `response` for `request` (a no-op when an entry exists); the key."""
    key = request_key(request)
    dest = entry_path(root, key)
    if dest.exists():
        return key
    data = dumps({"format": FORMAT, "kind": "judge", "request": request, "response": response,
                  "created": created})
    staging = root / STAGING
    staging.mkdir(parents=True, exist_ok=True)
    _ignore_in_git(staging)
    tmp = staging / f"judge-{host_name()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    try:
        if fcntl is not None:           # a live write, as staging folders are (gc, verify)
            fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        _make_parents(dest.parent)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, dest)          # never replaces an entry another writer made
            _fsync_dir(dest.parent)
    finally:
        tmp.unlink(missing_ok=True)
        os.close(fd)
    return key


def entry_bytes(root: Path, request: dict[str, Any]) -> tuple[str, bytes] | None:
    """(key, the entry file's bytes) of `request`'s sound entry, for sending elsewhere."""
    key = request_key(request)
    if not has(root, request):
        return None
    try:
        return key, entry_path(root, key).read_bytes()
    except OSError:
        return None


def accept(root: Path, key: str, data: bytes) -> bool:
    """Keep an entry sent from elsewhere (a Dask worker, or the client to a worker) when it
    is a judge record whose request hashes to `key`; False (nothing written) when not."""
    try:
        record = loads(data)
    except ValueError:
        return False
    if not _KEY.match(key) or not isinstance(record, dict) or record.get("kind") != "judge" \
            or not isinstance(record.get("request"), dict) \
            or not isinstance(record.get("response"), dict) \
            or request_key(record["request"]) != key:
        return False
    keep(root, record["request"], record["response"], str(record.get("created", "")))
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
    if path is None:
        return ["stray entry in the judge cache (only <2 hex>/<sha256>.json files belong)"]
    bucket, name = path.parent.name, path.name
    key = name[:-5] if name.endswith(".json") else ""
    if not _KEY.match(key) or bucket != key[:2] or path.is_symlink() or not path.is_file():
        return ["stray entry in the judge cache (only <2 hex>/<sha256>.json files belong)"]
    try:
        data = path.read_bytes()
        record = loads(data)
    except (OSError, ValueError) as exc:
        return [f"unreadable judge cache entry: {exc}"]
    if not isinstance(record, dict) or record.get("kind") != "judge" \
            or not isinstance(record.get("request"), dict) \
            or not isinstance(record.get("response"), dict):
        return ["not a judge cache record (needs kind 'judge', a request and a response)"]
    out = []
    if dumps(record) != data:
        out.append("not in canonical form (edited by hand?)")
    digest = request_key(record["request"])
    if digest != key:
        out.append(f"its request hashes to {digest[:12]}, not {key[:12]} as the file name says "
                   "(edited or renamed)")
    return out
