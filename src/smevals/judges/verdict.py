"""Verdicts: the one JSON object a judge answers with, by kind, and how it is read.

`{"reason": str, "pass": bool}` (judge), `{"reason", "score": number}` (score),
`{"reason", "category": str}` (category), `{"reason", "match": bool}` (match),
`{"reason", "winner": "A" | "B" | "tie"}` (pairwise). The whole answer is parsed as JSON
first, else the first JSON object in it. Anything else is a VerdictError: the Check's
outcome is then `error`, never a pass.
"""

from __future__ import annotations

import json
import math
from typing import Any

KINDS = ("judge", "score", "category", "match", "pairwise")
FIELD = {"judge": "pass", "score": "score", "category": "category", "match": "match",
         "pairwise": "winner"}
WINNERS = ("A", "B", "tie")


class VerdictError(Exception):
    """The judge's answer is not a verdict of the expected kind."""


def answer_format(kind: str, categories: list[str] | None = None,
                  scale: tuple[float, float] = (0, 1)) -> str:
    """The verdict's shape in words, for the prompt."""
    value = {
        "judge": "true or false",
        "score": f"a number from {scale[0]:g} to {scale[1]:g}",
        "category": "one of " + ", ".join(json.dumps(c) for c in categories or []),
        "match": "true or false",
        "pairwise": '"A", "B" or "tie"',
    }[kind]
    return f'{{"reason": "<one or two sentences>", "{FIELD[kind]}": <{value}>}}'


def json_schema(kind: str, categories: list[str] | None = None) -> dict[str, Any]:
    """The verdict's JSON Schema, for structured output (`response_format`)."""
    value: Any = {
        "judge": {"type": "boolean"},
        "score": {"type": "number"},
        "category": {"type": "string", "enum": list(categories or [])},
        "match": {"type": "boolean"},
        "pairwise": {"type": "string", "enum": list(WINNERS)},
    }[kind]
    return {"type": "object", "additionalProperties": False,
            "properties": {"reason": {"type": "string"}, FIELD[kind]: value},
            "required": ["reason", FIELD[kind]]}


def first_object(text: str) -> dict[str, Any] | None:
    """The whole text as a JSON object, else the first JSON object found in it."""
    stripped = text.strip()
    try:
        whole = json.loads(stripped)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        return whole
    decoder = json.JSONDecoder()
    start = stripped.find("{")
    while start != -1:
        try:
            found, _ = decoder.raw_decode(stripped, start)
        except ValueError:
            found = None
        if isinstance(found, dict):
            return found
        start = stripped.find("{", start + 1)
    return None


def parse(kind: str, text: str, categories: list[str] | None = None,
          scale: tuple[float, float] = (0, 1)) -> dict[str, Any]:
    """`{"reason": str, FIELD: value}` from the judge's answer; VerdictError if it is not one."""
    data = first_object(text)
    if data is None:
        raise VerdictError("the judge's answer holds no JSON object")
    key = FIELD[kind]
    if key not in data:
        raise VerdictError(f"the judge's verdict has no {key!r} field")
    reason = data.get("reason", "")
    if not isinstance(reason, str):
        raise VerdictError("the judge's `reason` is not a string")
    return {"reason": reason.strip(), key: _value(kind, data[key], categories, scale)}


def _value(kind: str, value: object, categories: list[str] | None,
           scale: tuple[float, float]) -> Any:
    if kind in ("judge", "match"):
        if not isinstance(value, bool):
            raise VerdictError(f"the judge's {FIELD[kind]!r} is {value!r}, not true or false")
        return value
    if kind == "score":
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not math.isfinite(value):
            raise VerdictError(f"the judge's score is {value!r}, not a number")
        if not scale[0] <= value <= scale[1]:
            raise VerdictError(f"the judge's score {value:g} is outside the scale "
                               f"{scale[0]:g} to {scale[1]:g}")
        return value
    if kind == "category":
        wanted = {c.strip().lower(): c for c in categories or []}
        if not isinstance(value, str) or value.strip().lower() not in wanted:
            raise VerdictError(f"the judge's category {value!r} is not one of the listed "
                               "categories")
        return wanted[value.strip().lower()]
    if not isinstance(value, str) or value.strip().lower() not in ("a", "b", "tie"):
        raise VerdictError(f"the judge's winner is {value!r}, not \"A\", \"B\" or \"tie\"")
    text = value.strip()
    return "tie" if text.lower() == "tie" else text.upper()
