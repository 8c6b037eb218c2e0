"""JSON Schema validation of authoring files, with errors located in the YAML source."""

from __future__ import annotations

from typing import Any

from smevals.errors import Problem
from smevals.spec.yamlio import FieldPath, YamlDoc
from smevals.store.fastschema import quick_check, record_schema, record_validator

SCHEMA_NAMES = ("eval", "task", "config", "grader", "run", "grade", "usage", "fixture")


def load_schema(kind: str) -> dict[str, Any]:
    """The packaged JSON Schema `<kind>.schema.json` (found through the installed package)."""
    return record_schema(kind)


def validator(kind: str) -> Any:
    """jsonschema's Draft 2020-12 validator for `<kind>.schema.json` (cached)."""
    return record_validator(kind)


def schema_problems(doc: YamlDoc, kind: str) -> list[Problem]:
    """Every schema violation of `doc`, each at the line of the field it concerns.

    A compiled check says yes quickly (store/fastschema.py); only a document it rejects is
    handed to jsonschema, which says why (and is imported only then)."""
    quick = quick_check(kind)
    if quick is not None and quick(doc.data):
        return []
    errors = sorted(validator(kind).iter_errors(doc.data), key=lambda e: list(map(str, e.path)))
    return [_locate(doc, error) for error in errors]


def _locate(doc: YamlDoc, error: Any) -> Problem:
    where: FieldPath = tuple(error.absolute_path)
    message = _message(error)
    if error.validator == "additionalProperties":
        extra = _extra_keys(error)
        if extra:
            where = where + (extra[0],)
            message = f"unknown key '{extra[0]}'" + _allowed(error.schema)
    at_value = error.validator not in ("additionalProperties", "required")
    return doc.problem(where, message, at_value=bool(where) and at_value)


def _extra_keys(error: Any) -> list[str]:
    allowed = set(error.schema.get("properties", {}))
    instance = error.instance if isinstance(error.instance, dict) else {}
    return sorted(k for k in instance if k not in allowed)


def _allowed(schema: dict[str, Any]) -> str:
    names = sorted(schema.get("properties", {}))
    return f" (allowed: {', '.join(names)})" if names else ""


def _message(error: Any) -> str:
    kind = error.validator
    if kind == "type":
        return f"expected {_type_words(error.validator_value)}, got {_show(error.instance)}"
    if kind == "required":
        return error.message.replace("is a required property", "is required")
    if kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        words = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
        return f"must be {words[kind]} {error.validator_value}, got {_show(error.instance)}"
    if kind == "enum":
        choices = ", ".join(map(str, error.validator_value))
        return f"must be one of {choices}, got {_show(error.instance)}"
    if kind == "oneOf":
        return f"invalid value {_show(error.instance)}"
    if kind == "minItems":
        return "must not be empty" if error.validator_value == 1 else error.message
    if kind == "minLength":
        return "must not be empty"
    return str(error.message)


def _type_words(value: Any) -> str:
    names: dict[str, str] = {
        "object": "a mapping", "array": "a list", "string": "a string", "number": "a number",
        "integer": "an integer", "boolean": "a boolean (true or false)", "null": "null"}
    if isinstance(value, list):
        return " or ".join(names.get(str(v), str(v)) for v in value)
    return names.get(value, str(value))


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
