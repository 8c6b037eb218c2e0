"""Text for the pages, cut to size: a field's value (`capped`) and the first characters of a
file (`read_text`, `text_of`), shared by the Task and Run pages (pages.py), the timelines
(timeline.py) and the explorer (explore.py)."""

from __future__ import annotations

from typing import Any

import orjson

from smevals.site import artifacts
from smevals.site.data import Loaded
from smevals.store.read import Obj

FIELD_LIMIT = 32 * 1024         # a Check's details, notes (JSON characters)


def capped(value: object, limit: int = FIELD_LIMIT) -> object:
    """`value`, or its JSON cut to `limit` characters when longer."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + "\n[... cut]"
    text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    return value if len(text) <= limit else {"cut": True, "json": text[:limit]}


def read_text(loaded: Loaded, obj: Obj[Any], path: str, limit: int) -> dict[str, Any] | None:
    """{"text", "truncated"} of a text file, at most `limit` characters."""
    return text_of(artifacts.read_bytes(loaded.store, obj, path, 4 * limit), limit)


def text_of(data: bytes | None, limit: int) -> dict[str, Any] | None:
    """The first `limit` characters of `data` (read up to 4 * limit bytes)."""
    if data is None:
        return None
    text = artifacts.decode(data)
    return {"text": text[:limit], "truncated": len(text) > limit or len(data) >= 4 * limit}
