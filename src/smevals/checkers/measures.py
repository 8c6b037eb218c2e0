"""Measurement checkers over the Run record's usage: http_status and three ceilings.

A measurement that is absent, not a number, negative or non-finite fails the check:
an unrecorded cost never passes a ceiling as zero.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from smevals.checkers.base import (
    CEILING,
    Checker,
    CheckInput,
    CheckResult,
    checker,
    fail,
    is_number,
    one_of_words,
)

CHECKERS: dict[str, Checker] = {}

_STATUS = {"type": "integer", "minimum": 100, "maximum": 599}
_STATUSES = {
    "anyOf": [_STATUS, {"type": "array", "minItems": 1, "items": _STATUS}],
    "x-expect": "an HTTP status code (100-599) or a non-empty list of them",
}


def _usage(inp: CheckInput) -> Mapping[str, Any]:
    if not isinstance(inp.usage, Mapping):
        fail("the Run recorded no usage")
    return inp.usage


def _measure(usage: Mapping[str, Any], keys: tuple[str, ...], what: str) -> float:
    """The first present key's value; fails unless it is a finite number >= 0."""
    key = next((k for k in keys if usage.get(k) is not None), None)
    if key is None:
        fail(f"the Run's usage has no {what}")
    value = usage[key]
    if not is_number(value) or value < 0:
        fail(f"the Run's usage has no non-negative finite {what} ({key} is {value!r:.40})")
    return float(value)


@checker(
    CHECKERS,
    "http_status",
    "The model call's HTTP status equals `status` (or is one of a list).",
    properties={"status": _STATUSES},
    required=("status",),
    reads="none",
)
def http_status(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    usage = _usage(inp)
    got = next((usage[k] for k in ("http_status", "status", "status_code") if k in usage), None)
    if got is None:
        fail("the Run's usage has no http_status")
    wanted = opts["status"] if isinstance(opts["status"], list) else [opts["status"]]
    ok = is_number(got) and float(got).is_integer() and int(got) in wanted
    notes = f"HTTP status {got!r:.40}, expected {' or '.join(map(str, wanted))}"
    return CheckResult(ok=ok, score=1.0 if ok else 0.0, notes="" if ok else notes)


def _finite(option: str) -> Callable[[dict[str, Any]], list[tuple[str, str]]]:
    def problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
        value = opts.get(option)
        if value is None or is_number(value):
            return []
        return [(option, "must be a finite number")]

    return problems


def _ceiling(value: float, limit: float, what: str) -> CheckResult:
    ok = value <= limit
    notes = "" if ok else f"{what} {value:g} exceeds the ceiling {limit:g}"
    return CheckResult(ok=ok, score=1.0 if ok else 0.0, notes=notes, metrics={what: value})


@checker(
    CHECKERS,
    "latency_threshold",
    "The recorded latency (usage.latency_ms) is at most `max_ms`.",
    properties={"max_ms": CEILING},
    required=("max_ms",),
    aliases={"p95_ms": "max_ms", "maxMs": "max_ms"},
    reads="none",
    problems=_finite("max_ms"),
)
def latency_threshold(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    value = _measure(_usage(inp), ("latency_ms", "p95_ms"), "latency_ms")
    return _ceiling(value, opts["max_ms"], "latency_ms")


@checker(
    CHECKERS,
    "cost_threshold",
    "The recorded cost (usage.cost_usd) is at most `max_usd`.",
    properties={"max_usd": CEILING},
    required=("max_usd",),
    aliases={"maxUsd": "max_usd"},
    reads="none",
    problems=_finite("max_usd"),
)
def cost_threshold(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    value = _measure(_usage(inp), ("cost_usd", "total_cost_usd"), "cost_usd")
    return _ceiling(value, opts["max_usd"], "cost_usd")


@checker(
    CHECKERS,
    "token_threshold",
    "The recorded token count (total by default) is at most `max_tokens`.",
    properties={
        "max_tokens": CEILING,
        "measure": one_of_words("total_tokens", "input_tokens", "output_tokens"),
    },
    required=("max_tokens",),
    aliases={"maxTokens": "max_tokens"},
    reads="none",
    problems=_finite("max_tokens"),
)
def token_threshold(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    usage = _usage(inp)
    measure = opts.get("measure", "total_tokens")
    if measure == "total_tokens" and usage.get("total_tokens") is None:
        usage = _with_total(usage)
    keys = (measure, "tokens") if measure == "total_tokens" else (measure,)
    return _ceiling(_measure(usage, keys, measure), opts["max_tokens"], measure)


def _with_total(usage: Mapping[str, Any]) -> Mapping[str, Any]:
    """total_tokens = input + output when the Run recorded both (and not the total)."""
    parts = usage.get("input_tokens"), usage.get("output_tokens")
    first, second = parts
    if is_number(first) and is_number(second) and first >= 0 and second >= 0:
        return {**usage, "total_tokens": float(first) + float(second)}
    return usage
