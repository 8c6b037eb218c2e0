"""ai-eval-forge case files: a JSON array of cases, or JSONL (one case per non-blank line).

The fields and defaults follow ai-eval-forge 0.2.0 (docs/migrating.md): `id` (else
`case-<index>`), `actual` (else `output`, else ""), `expected` (else `reference`, else ""),
`checks` (absent or empty: one `token_f1` check at 0.65), `sources`, `input`, `tags`,
`costUsd` and `latencyMs` (else the same keys under `meta`, else 0). Where ai-eval-forge
itself crashes (a case that is not an object, a `checks` that is not a list of objects, a
cost that is not a number), this module raises `ForgeInputError` (exit 2).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smevals.errors import SmevalsError

DEFAULT_CHECK: dict[str, Any] = {"type": "token_f1", "min": 0.65}


class ForgeInputError(SmevalsError):
    """Input that ai-eval-forge cannot score (it crashes or refuses): exit 2."""


@dataclass(frozen=True)
class Case:
    id: str
    where: str                   # "cases.jsonl:3" or "cases.json[2]", for messages
    actual: str
    expected: str                # serialised as ai-eval-forge does
    checks: list[dict[str, Any]]  # as written, or [DEFAULT_CHECK]
    sources: Any                 # the case's `sources` (None when absent)
    input: Any
    tags: Any
    cost_usd: float
    latency_ms: float
    raw: dict[str, Any] = field(repr=False, default_factory=dict)

    def meta(self) -> dict[str, Any]:
        return {"input": self.input, "tags": self.tags, "costUsd": self.cost_usd,
                "latencyMs": self.latency_ms}


def serialise(value: object) -> str:
    """A string as it is; anything else as compact JSON (`null` for None), non-ASCII kept."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def read_cases(path: Path) -> list[Case]:
    """Parse the case file at `path`; ForgeInputError names the file and line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ForgeInputError(f"{path}: no such file") from None
    except OSError as exc:
        raise ForgeInputError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise ForgeInputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    return parse_cases(text, str(path))


def parse_cases(text: str, label: str = "cases") -> list[Case]:
    """Cases from the text of a case file (`label` names it in messages)."""
    if text.strip().startswith("["):
        items = _load(text, label)
        if not isinstance(items, list):
            raise ForgeInputError(f"{label}: expected a JSON array of cases")
        located = [(f"{label}[{i}]", item) for i, item in enumerate(items)]
    else:
        located = [(f"{label}:{number}", _load(line, f"{label}:{number}"))
                   for number, line in enumerate(text.split("\n"), start=1) if line.strip()]
    return [make_case(item, index, where) for index, (where, item) in enumerate(located)]


def _load(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ForgeInputError(f"{where}: invalid JSON: {exc.msg} (line {exc.lineno} column "
                              f"{exc.colno})") from None
    except RecursionError:
        raise ForgeInputError(f"{where}: JSON nested too deeply") from None


def make_case(item: object, index: int, where: str) -> Case:
    """One case from its JSON object, with ai-eval-forge's fallbacks and defaults."""
    if not isinstance(item, dict):
        raise ForgeInputError(f"{where}: a case must be a JSON object, not {_kind(item)}")
    meta = item.get("meta", {})
    if not isinstance(meta, dict):
        raise ForgeInputError(f"{where}: `meta` must be an object, not {_kind(meta)}")
    checks = _checks(item.get("checks"), where)
    return Case(
        id=str(item.get("id") or f"case-{index}"),
        where=where,
        actual=serialise(_first(item, "actual", "output")),
        expected=serialise(_first(item, "expected", "reference")),
        checks=checks,
        sources=item.get("sources"),
        input=item.get("input"),
        tags=item.get("tags") or [],
        cost_usd=_number(item, meta, "costUsd", where),
        latency_ms=_number(item, meta, "latencyMs", where),
        raw=item,
    )


def _first(item: dict[str, Any], key: str, fallback: str) -> object:
    if key in item:
        return item[key]
    return item.get(fallback, "")


def _checks(checks: object, where: str) -> list[dict[str, Any]]:
    if not checks:
        return [dict(DEFAULT_CHECK)]
    if not isinstance(checks, list):
        raise ForgeInputError(f"{where}: `checks` must be a list, not {_kind(checks)}")
    for number, check in enumerate(checks):
        if not isinstance(check, dict):
            raise ForgeInputError(f"{where}: checks[{number}] must be an object, "
                                  f"not {_kind(check)}")
    return [dict(c) for c in checks]


def _number(item: dict[str, Any], meta: dict[str, Any], key: str, where: str) -> float:
    value = item[key] if key in item else meta.get(key, 0)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ForgeInputError(f"{where}: `{key}` must be a number, not {value!r}") from None
    if not math.isfinite(number):
        raise ForgeInputError(f"{where}: `{key}` must be a finite number, not {value!r}")
    return number


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
             type(None): "null", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)
