"""Canonical bytes: records are JSON with sorted keys, 2-space indent, UTF-8, LF, final newline."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE


def dumps(value: object) -> bytes:
    """The one encoding of `value`: identical content always gives identical bytes."""
    return orjson.dumps(value, option=_OPTIONS | orjson.OPT_NON_STR_KEYS)


def loads(data: bytes) -> Any:
    return orjson.loads(data)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

