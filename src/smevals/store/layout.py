"""Names on disk: safe path parts made from user names, object ids, and where objects live.

```
<store>/runs/<task>/<config>/<model>/<id>/run.json
<store>/grades/<grader>/<task>/<config>/<model>/<id>/grade.json
```
"""

from __future__ import annotations

import functools
import hashlib
import re
from datetime import UTC, datetime
from typing import Any

KINDS = ("run", "grade")
RECORD_NAMES = {"run": "run.json", "grade": "grade.json"}
STAMP_FIELDS = {"run": "started", "grade": "graded"}
DEPTH = {"run": 3, "grade": 4}   # folder levels between the kind folder and the objects
STAGING = ".staging"

_SAFE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_UNSAFE_RUN = re.compile(r"[^a-z0-9._-]+")
_LOOKS_HASHED = re.compile(r"-(?=[0-9]*[a-f])[0-9a-f]{8}$")   # not a date like -20241022
_WINDOWS_DEVICES = re.compile(r"^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$")
ID_RE = re.compile(r"^(\d{8}T\d{6}Z)-([0-9a-f]{12,64})$")
HASH_PREFIX = 12
SLUG_HASH = 8
SLUG_KEEP = 48


@functools.lru_cache(maxsize=65536)
def slug(name: str) -> str:
    """A folder name for `name`: the name itself when already safe, else a cleaned form plus a
    short hash of the exact name, so names that differ only in case or punctuation never share
    a folder. A safe name that ends like a hashed slug (`-` and 8 hex with a letter) is hashed
    too, so no name can take the folder made for another; Staging.commit and verify catch the
    (2^-32) rest."""
    if _is_safe(name):
        return name
    cleaned = _UNSAFE_RUN.sub("-", name.lower())
    cleaned = re.sub(r"\.{2,}", "-", cleaned).strip("-.")[:SLUG_KEEP].strip("-.") or "x"
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:SLUG_HASH]
    return f"{cleaned}-{digest}"


def _is_safe(name: str) -> bool:
    return bool(_SAFE.match(name)) and not name.endswith(".") and ".." not in name \
        and not _LOOKS_HASHED.search(name) and not _WINDOWS_DEVICES.match(name)


def timestamp(moment: datetime) -> str:
    """`20261130T053000Z` for an aware datetime."""
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def object_id(stamp: str, digest: str) -> str:
    return f"{stamp}-{digest[:HASH_PREFIX]}"


def parse_iso(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise ValueError(f"timestamp without a time zone: {text}")
    return moment


def object_parent(kind: str, names: list[str]) -> str:
    """`runs/<task>/<config>/<model>` or `grades/<grader>/<task>/<config>/<model>`."""
    if len(names) != DEPTH[kind]:
        raise ValueError(f"a {kind} is filed under {DEPTH[kind]} names, got {len(names)}")
    return "/".join([kind + "s", *(slug(str(n)) for n in names)])


def record_names(kind: str, record: dict[str, Any]) -> list[str] | None:
    """The names a record says its object is filed under, or None when it does not say."""
    try:
        if kind == "run":
            return [record["task"]["name"], record["config"]["name"], record["model"]]
        run = record["run"]
        return [record["grader"]["name"], run["task"], run["config"], run["model"]]
    except (KeyError, TypeError):
        return None
