"""The environment variables of the runner and checker contracts (kept from the original)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

_NON_ALNUM = re.compile(r"[^A-Za-z0-9]+")
_INHERITED = ("SMEVALS_TASK_", "SMEVALS_CONFIG_", "SMEVALS_CHECK_")
_FIXED = ("SMEVALS_TASK", "SMEVALS_CONFIG", "SMEVALS_PROMPT", "SMEVALS_MODEL", "SMEVALS_RUN_DIR",
          "SMEVALS_EVAL_DIR", "SMEVALS_CONFIG_DIR", "SMEVALS_CHECK", "SMEVALS_USAGE_FILE",
          "SMEVALS_SAMPLE", "SMEVALS_SYSTEM")


def env_key(key: str) -> str:
    """`max tokens` -> `MAX_TOKENS`: runs of non-alphanumerics become `_`, uppercased."""
    return _NON_ALNUM.sub("_", str(key)).upper()


def scalar_vars(prefix: str, doc: Mapping[str, Any]) -> dict[str, str]:
    """`<prefix><KEY>` for every scalar (str, int, float, bool) value, shown as str() does."""
    return {prefix + env_key(k): str(v) for k, v in doc.items()
            if isinstance(v, (str, int, float, bool)) and v is not None}


def clean_base(environ: Mapping[str, str]) -> dict[str, str]:
    """The parent environment without contract variables left over from an outer smevals."""
    return {k: v for k, v in environ.items()
            if not k.startswith(_INHERITED) and k not in _FIXED}


def to_json(value: object) -> str:
    return orjson.dumps(value, default=str).decode()
