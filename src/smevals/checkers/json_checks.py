"""JSON checkers: json_valid, json_field (ai-eval-forge), json_path_assertion (@caveman/evals).

json_schema lives in json_schema.py. The path and equality helpers serve tools.py too.
"""

from __future__ import annotations

from typing import Any

from smevals.checkers.base import (
    ANY,
    BOOL,
    STRING,
    Checker,
    CheckInput,
    CheckResult,
    binary,
    checker,
    fail,
)
from smevals.checkers.inputs import input_text, parse_json
from smevals.checkers.options import short_json

CHECKERS: dict[str, Checker] = {}

_MISSING = object()


def load_json(opts: dict[str, Any], inp: CheckInput) -> tuple[str, Any]:
    """(label, parsed value) of the check's input; fails (score 0) when not JSON."""
    label, text = input_text(opts, inp)
    try:
        return label, parse_json(text)
    except ValueError as exc:
        fail(f"{label} is not valid JSON: {str(exc)[:160]}", score=0.0)


def deep_equal(a: object, b: object) -> bool:
    """JSON equality: key order ignored, 1 == 1.0, but true != 1 and "5" != 5."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def _is_index(segment: str, negative_ok: bool) -> bool:
    digits = segment[1:] if negative_ok and segment.startswith("-") else segment
    return digits.isascii() and digits.isdigit()


def walk(value: object, segments: list[str], negative_ok: bool) -> Any:
    """Follow dotted-path segments through objects and arrays; _MISSING if absent."""
    for segment in segments:
        if isinstance(value, dict):
            value = value.get(segment, _MISSING)
        elif isinstance(value, list) and _is_index(segment, negative_ok):
            index = int(segment)
            value = value[index] if -len(value) <= index < len(value) else _MISSING
        else:
            return _MISSING
        if value is _MISSING:
            return _MISSING
    return value


def strict_path(value: object, path: str) -> tuple[bool, Any]:
    """@caveman/evals path rules: split on '.', empty segments kept, indexes in [0, len)."""
    found = walk(value, path.split("."), negative_ok=False)
    return found is not _MISSING, found


@checker(CHECKERS, "json_valid", "The input parses as strict JSON.", reads="json")
def json_valid(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    load_json(opts, inp)
    return binary(True)


@checker(
    CHECKERS,
    "json_field",
    "The value at a dotted path (array indexes may be negative) equals `value`.",
    properties={"path": STRING, "value": ANY},
    required=("path", "value"),
    reads="json",
)
def json_field(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, doc = load_json(opts, inp)
    path = opts["path"]
    found = walk(doc, [s for s in path.split(".") if s], negative_ok=True)
    if found is _MISSING:
        return binary(False, f"path {path!r} not found in {label}", path=path)
    notes = f"{path or '(document)'} is {short_json(found)}, expected {short_json(opts['value'])}"
    return binary(deep_equal(found, opts["value"]), notes, path=path, got=short_json(found, 200))


@checker(
    CHECKERS,
    "json_path_assertion",
    "A dotted path exists (or not, with exists: false), optionally equal to `equals`.",
    properties={"path": STRING, "equals": ANY, "exists": BOOL},
    required=("path",),
    reads="json",
)
def json_path_assertion(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    try:
        doc: Any = parse_json(text)
    except ValueError:
        doc = text
    path = opts["path"]
    found, value = strict_path(doc, path)
    return path_verdict(found, value, opts, f"path {path!r} in {label}")


def path_verdict(found: bool, value: object, opts: dict[str, Any], where: str) -> CheckResult:
    """exists: true/false decides alone; else absent fails, `equals` compares if given."""
    exists = opts.get("exists")
    if exists is True:
        return binary(found, f"{where} not found")
    if exists is False:
        return binary(not found, f"{where} exists")
    if not found:
        return binary(False, f"{where} not found")
    if "equals" not in opts:
        return binary(True)
    notes = f"{where} is {short_json(value)}, expected {short_json(opts['equals'])}"
    return binary(deep_equal(value, opts["equals"]), notes, got=short_json(value, 200))
