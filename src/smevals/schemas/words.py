"""Messages for schema violations, worded as jsonschema words them.

Records keep these messages (a Run's `usage_error`) and users have read them since the first
release, so a violation found by jsonschema-rs is described in the same words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Say = Callable[[Any, Any, dict[str, Any]], str]


def say(keyword: str, value: object, instance: object, details: dict[str, Any],
        fallback: str) -> str:
    """The message for `keyword` (its schema `value`) failing on `instance`."""
    words = _WORDS.get(keyword)
    return words(value, instance, details) if words else fallback


def _type(value: object, instance: object, details: dict[str, Any]) -> str:
    names = value if isinstance(value, list) else [value]
    return f"{instance!r} is not of type {', '.join(repr(n) for n in names)}"


def _required(value: object, instance: object, details: dict[str, Any]) -> str:
    return f"{details.get('property')!r} is a required property"


def _extra(value: object, instance: object, details: dict[str, Any]) -> str:
    extra = sorted(details.get("unexpected") or [], key=str)
    verb = "was" if len(extra) == 1 else "were"
    names = ", ".join(repr(name) for name in extra)
    return f"Additional properties are not allowed ({names} {verb} unexpected)"


def _short(value: object, instance: object, details: dict[str, Any]) -> str:
    return f"{instance!r} should be non-empty" if value == 1 else f"{instance!r} is too short"


def _long(value: object, instance: object, details: dict[str, Any]) -> str:
    return f"{instance!r} is expected to be empty" if value == 0 else f"{instance!r} is too long"


def _few_properties(value: object, instance: object, details: dict[str, Any]) -> str:
    if value == 1:
        return f"{instance!r} should be non-empty"
    return f"{instance!r} does not have enough properties"


def _none_of(value: object, instance: object, details: dict[str, Any]) -> str:
    return f"{instance!r} is not valid under any of the given schemas"


def _one_of(value: Any, instance: Any, details: dict[str, Any]) -> str:
    valid = [value[i] for i in details.get("valid") or ()]
    if not valid:
        return _none_of(value, instance, details)
    reprs = ", ".join(repr(schema) for schema in valid[1:] + valid[:1])
    return f"{instance!r} is valid under each of {reprs}"


def _bound(text: str) -> Say:
    return lambda value, instance, details: f"{instance!r} is {text} {value!r}"


_WORDS: dict[str, Say] = {
    "type": _type,
    "required": _required,
    "additionalProperties": _extra,
    "enum": lambda value, instance, d: f"{instance!r} is not one of {value!r}",
    "const": lambda value, instance, d: f"{value!r} was expected",
    "minimum": _bound("less than the minimum of"),
    "maximum": _bound("greater than the maximum of"),
    "exclusiveMinimum": _bound("less than or equal to the minimum of"),
    "exclusiveMaximum": _bound("greater than or equal to the maximum of"),
    "minLength": _short,
    "minItems": _short,
    "maxLength": _long,
    "maxItems": _long,
    "minProperties": _few_properties,
    "maxProperties": lambda value, instance, d: f"{instance!r} has too many properties",
    "pattern": lambda value, instance, d: f"{instance!r} does not match {value!r}",
    "format": lambda value, instance, d: f"{instance!r} is not a {value!r}",
    "multipleOf": lambda value, instance, d: f"{instance!r} is not a multiple of {value}",
    "uniqueItems": lambda value, instance, d: f"{instance!r} has non-unique elements",
    "not": lambda value, instance, d: f"{instance!r} should not be valid under {value!r}",
    "anyOf": _none_of,
    "oneOf": _one_of,
    "falseSchema": lambda value, instance, d: f"False schema does not allow {instance!r}",
}
