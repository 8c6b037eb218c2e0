"""Names on disk: safe path parts made from user names, and object ids."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime

_SAFE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_UNSAFE_RUN = re.compile(r"[^a-z0-9._-]+")
ID_RE = re.compile(r"^(\d{8}T\d{6}Z)-([0-9a-f]{12,64})$")
HASH_PREFIX = 12


def slug(name: str) -> str:
    """A folder name for `name`: the name itself when already safe, else a cleaned form plus a
    short hash of the exact name, so names differing only in case or punctuation never share."""
    if _SAFE.match(name) and not name.endswith(".") and ".." not in name:
        return name
    cleaned = _UNSAFE_RUN.sub("-", name.lower()).replace("..", "-").strip("-.")[:48] or "x"
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{cleaned}-{digest}"


def timestamp(moment: datetime) -> str:
    """`20261130T053000Z` for an aware datetime."""
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def object_id(stamp: str, digest: str) -> str:
    return f"{stamp}-{digest[:HASH_PREFIX]}"


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
