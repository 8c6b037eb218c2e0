"""JSON Schema validation of authoring files, with errors located in the YAML source."""

from __future__ import annotations

from typing import Any

from smevals.errors import Problem
from smevals.evaldef.yamlio import FieldPath, YamlDoc
from smevals.schemas import Violation, violations

__all__ = ["schema_problems"]


def schema_problems(doc: YamlDoc, kind: str) -> list[Problem]:
    """Every schema violation of `doc`, each at the line of the field it concerns."""
    return [_locate(doc, found) for found in violations(kind, doc.data)]


def _locate(doc: YamlDoc, error: Violation) -> Problem:
    where: FieldPath = error.path
    message = _message(error)
    if error.keyword == "additionalProperties":
        extra = _extra_keys(error)
        if extra:
            where = where + (extra[0],)
            message = f"unknown key '{extra[0]}'" + _allowed(error.schema)
    at_value = error.keyword not in ("additionalProperties", "required")
    return doc.problem(where, message, at_value=bool(where) and at_value)


def _extra_keys(error: Violation) -> list[str]:
    allowed = set(error.schema.get("properties", {}))
    instance = error.instance if isinstance(error.instance, dict) else {}
    return sorted(k for k in instance if k not in allowed)


def _allowed(schema: dict[str, Any]) -> str:
    names = sorted(schema.get("properties", {}))
    return f" (allowed: {', '.join(names)})" if names else ""


def _message(error: Violation) -> str:
    kind, value = error.keyword, error.value
    if kind == "type":
        return f"expected {_type_words(value)}, got {_show(error.instance)}"
    if kind == "required":
        return error.message.replace("is a required property", "is required")
    if kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        words = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
        return f"must be {words[kind]} {value}, got {_show(error.instance)}"
    if kind == "enum":
        return f"must be one of {', '.join(map(str, value))}, got {_show(error.instance)}"
    if kind == "oneOf":
        return f"invalid value {_show(error.instance)}"
    if kind == "minItems":
        return "must not be empty" if value == 1 else error.message
    if kind == "minLength":
        return "must not be empty"
    return error.message


def _type_words(value: Any) -> str:
    names: dict[str, str] = {
        "object": "a mapping", "array": "a list", "string": "a string", "number": "a number",
        "integer": "an integer", "boolean": "a boolean (true or false)", "null": "null"}
    if isinstance(value, list):
        return " or ".join(names.get(str(v), str(v)) for v in value)
    return names.get(value, str(value))


def _show(value: object) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
