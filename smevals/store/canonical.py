"""Canonical bytes: records are JSON with sorted keys, 2-space indent, UTF-8, LF, final newline."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
_CHUNK = 1 << 20


def dumps(value: Any) -> bytes:
    """The one encoding of `value`: identical content always gives identical bytes."""
    return orjson.dumps(value, option=_OPTIONS | orjson.OPT_NON_STR_KEYS)


def loads(data: bytes) -> Any:
    return orjson.loads(data)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> tuple[int, str]:
    """(size, sha256 hex) of a file, read in chunks."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()
