"""Text checkers: contains, not_contains, exact, exact_match, blocklist, levenshtein."""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from typing import Any

from smevals.checkers.base import (
    BOOL,
    STRING,
    UNIT,
    Checker,
    CheckFailure,
    CheckInput,
    CheckResult,
    binary,
    checker,
    fail,
    ratio_result,
    str_list,
)
from smevals.checkers.edit_distance import TooLong, bounded
from smevals.checkers.inputs import input_text, parse_json, value_text

CHECKERS: dict[str, Checker] = {}

_FRAGMENT_LIST = {
    "type": "array",
    "minItems": 1,
    "items": {"type": "string", "minLength": 1, "x-expect": "a non-empty string"},
    "x-expect": "a non-empty list of non-empty strings",
}
_VALUES = {
    "anyOf": [{"type": "string", "minLength": 1}, _FRAGMENT_LIST],
    "x-expect": "a non-empty string or a non-empty list of non-empty strings",
}
_WORD = {"anyOf": [{"type": "string", "minLength": 1}, {"type": "number"}]}
_CONTAINS_VALUE = {
    "anyOf": [
        _WORD,
        {
            "type": "array",
            "minItems": 1,
            "items": {**_WORD, "x-expect": "a non-empty string or a number"},
        },
    ],
    "x-expect": "a non-empty string, a number, or a non-empty list of them",
}
_NOT_NULL = {"not": {"type": "null"}, "x-expect": "a value other than null"}


def _excerpt(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


@checker(
    CHECKERS,
    "contains",
    "Substring presence: one string (the original smevals) or a list with partial credit.",
    properties={
        "value": _CONTAINS_VALUE,
        "fragments": _FRAGMENT_LIST,
        "case_sensitive": BOOL,
        "threshold": UNIT,
        "any": BOOL,
        "casefold": BOOL,
    },
    required=(("value", "fragments"),),
    task_keys={"value": ("expected",)},
    aliases={"caseSensitive": "case_sensitive"},
)
def contains(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    value = opts["value"] if "value" in opts else opts["fragments"]
    fold: Callable[[str], str]
    if opts.get("casefold"):            # Unicode case folding (Python's str.casefold)
        fold = str.casefold
    elif opts.get("case_sensitive", not isinstance(value, list) or "fragments" in opts):
        fold = _same
    else:
        fold = str.lower
    if opts.get("any"):
        return _contains_any(label, text, value if isinstance(value, list) else [value], fold)
    if not isinstance(value, list):
        return _contains_one(label, text, value_text(value), fold)
    values = [value_text(v) for v in value]
    haystack = fold(text)
    missing = [v for v in values if fold(v) not in haystack]
    score = (len(values) - len(missing)) / len(values)
    notes = f"{len(values) - len(missing)}/{len(values)} substrings found in {label}"
    if missing:
        notes += "; missing " + ", ".join(repr(_excerpt(m, 60)) for m in missing[:5])
    return ratio_result(score, opts.get("threshold", 1.0), notes, missing=missing)


def _same(text: str) -> str:
    return text


def _contains_one(label: str, text: str, value: str, fold: Callable[[str], str]
                  ) -> CheckResult:
    """The original smevals' contains: ok only (no score), its notes on failure."""
    found = fold(value) in fold(text)
    return CheckResult(ok=found, notes="" if found else f"{label} does not contain {value!r}")


def _contains_any(label: str, text: str, values: list[Any], fold: Callable[[str], str]
                  ) -> CheckResult:
    """`any: true`: one of the values occurs (promptfoo's contains-any, Inspect's includes()
    over a list target)."""
    haystack = fold(text)
    found = [v for v in map(value_text, values) if fold(v) in haystack]
    notes = f"{label} contains none of " + ", ".join(repr(_excerpt(v, 60)) for v in
                                                       map(value_text, values[:5]))
    return binary(bool(found), notes, found=found[:5])


@checker(
    CHECKERS,
    "not_contains",
    "None of the fragments occurs (case-sensitive by default).",
    properties={
        "fragments": _VALUES,
        "case_sensitive": BOOL,
    },
    required=("fragments",),
    aliases={"value": "fragments", "caseSensitive": "case_sensitive"},
)
def not_contains(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    sensitive = opts.get("case_sensitive", True)
    haystack = text if sensitive else text.lower()
    values = _as_list(opts["fragments"])
    found = [v for v in values if (v if sensitive else v.lower()) in haystack]
    notes = f"{label} contains " + ", ".join(repr(_excerpt(f, 60)) for f in found[:5])
    return binary(not found, notes, found=found)


def _collapse(text: str) -> str:
    return " ".join(text.lower().split())


@checker(
    CHECKERS,
    "exact",
    "Equality after lowercasing and collapsing whitespace (ai-eval-forge).",
    properties={"value": _NOT_NULL},
    required=("value",),
    task_keys={"value": ("expected",)},
)
def exact(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    expected = _collapse(value_text(opts["value"]))
    got = _collapse(text)
    notes = f"{label} does not equal the expected value (ignoring case and whitespace)"
    return binary(got == expected, notes, expected=_excerpt(expected), got=_excerpt(got))


@checker(
    CHECKERS,
    "exact_match",
    "Trimmed equality, case-insensitive by default; structured values by sorted keys.",
    properties={"expected": _NOT_NULL, "case_sensitive": BOOL, "remove_punctuation": BOOL},
    required=("expected",),
    task_keys={"expected": ("expected",)},
    reads="json",
)
def exact_match(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    expected = opts["expected"]
    if opts.get("remove_punctuation") and not isinstance(expected, str):
        fail("remove_punctuation needs a string expected value")
    want = _canonical(expected)
    got = text.strip() if isinstance(expected, str) else _canonical_text(text)
    if not opts.get("case_sensitive", False):
        want, got = want.lower(), got.lower()
    if opts.get("remove_punctuation"):
        table = str.maketrans("", "", string.punctuation)
        want, got = want.translate(table), got.translate(table)
    notes = f"{label} does not match the expected value"
    return binary(want == got, notes, expected=_excerpt(want), got=_excerpt(got))


def _canonical(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _canonical_text(text: str) -> str:
    """Output compared with a structured value: its sorted-key JSON when it parses."""
    try:
        return _canonical(parse_json(text))
    except ValueError:
        return text.strip()


@checker(
    CHECKERS,
    "blocklist",
    "No listed term occurs as a whole word (case-insensitive).",
    properties={"terms": str_list()},
    required=("terms",),
)
def blocklist(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    lowered = text.lower()
    hits = sorted({t for t in opts["terms"] if _has_word(lowered, t.lower())})
    notes = f"{label} contains blocked terms: " + ", ".join(repr(_excerpt(h, 60)) for h in hits)
    return binary(not hits, notes, hits=hits)


def _has_word(text: str, term: str) -> bool:
    """`term` occurs with no letter or digit right before or after it."""
    start = text.find(term)
    while start >= 0:
        end = start + len(term)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not before.isalnum() and not after.isalnum():
            return True
        start = text.find(term, start + 1)
    return False


_EDITS = {"type": "integer", "minimum": 0, "x-expect": "a non-negative whole number"}


@checker(
    CHECKERS,
    "levenshtein",
    "Edit distance to the expected text at most max_distance (default 5, as promptfoo's).",
    properties={"value": STRING, "max_distance": _EDITS, "strip": BOOL, "utf16": BOOL},
    required=("value",),
    task_keys={"value": ("expected",)},
)
def levenshtein(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    value = opts["value"]
    if opts.get("strip", False):
        text, value = text.strip(), value.strip()
    if opts.get("utf16", False):        # count UTF-16 units, as JavaScript does
        text, value = _utf16(text), _utf16(value)
    limit = int(opts.get("max_distance", 5))
    try:
        distance = bounded(text, value, limit)
    except TooLong as exc:
        raise CheckFailure(str(exc)) from None
    if distance is None:
        return CheckResult(
            ok=False,
            notes=f"{label} is more than {limit} edits from the expected value (the exact "
            "distance is not computed for texts this long)",
            details={"distance_above": limit},
        )
    longest = max(len(text), len(value))
    ok = distance <= limit
    notes = "" if ok else f"{label} is {distance} edits from the expected value (at most " \
        f"{limit} allowed)"
    return CheckResult(ok=ok, score=1 - distance / longest if longest else 1.0, notes=notes,
                       details={"distance": distance})


def _utf16(text: str) -> str:
    """`text` with each character outside the BMP as its two UTF-16 surrogates."""
    if all(ord(c) < 0x10000 for c in text):
        return text
    data = text.encode("utf-16-le", "surrogatepass")
    return "".join(chr(int.from_bytes(data[i:i + 2], "little")) for i in range(0, len(data), 2))
