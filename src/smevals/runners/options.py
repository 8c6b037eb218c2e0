"""The config keys of the built-in Runners, as JSON Schemas checked by smevals.schemas.

Each built-in declares the schema of its keys (`options_schema`); `config_problems_for` checks a
Config against it and words every problem as (field path, message) for the author of the
YAML file: `headers.X: must be a string, not integer`. Conventions:

- a key set to null counts as unset (its default applies), so nulls are dropped first;
- JSON Schema has no word for "finite", so `.inf` and `.nan` in a number key are refused
  here (as they were before the keys had schemas);
- `x-problem` on a schema node words a failed `pattern`, `not` or `format` there (a string,
  or a mapping from keyword to words); `{value!r}` stands for the value at fault;
- `format` names one of `FORMATS`: a function giving the problem of a string, or None.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from smevals.net.chat import type_name
from smevals.schemas import Schema, Violation

# Config keys every Config may carry whatever its runner; a built-in never flags them.
COMMON_KEYS = frozenset({"name", "runner", "model", "timeout", "description", "prompt_template",
                         "system"})

Problems = list[tuple[str, str]]

TEXT: dict[str, Any] = {"type": "string", "pattern": r"\S"}
ENV_NAME: dict[str, Any] = {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
                            "x-problem": "is not an environment variable name: {value!r}"}
MAPPING: dict[str, Any] = {"type": "object", "propertyNames": {
    "type": "string", "x-problem": "keys must be strings"}}


def http_url(value: str) -> str | None:
    """An http(s) URL with a host and a valid port."""
    parts = urlsplit(value)
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        return f"has a bad port: {value!r}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"must be an http:// or https:// URL, not {value!r}"
    return None


FORMATS: dict[str, Callable[[str], str | None]] = {"http-url": http_url}


def options_schema(properties: dict[str, Any], required: Iterable[str] = ()) -> Schema:
    """The schema of a built-in's config keys (the common keys are allowed as they are)."""
    schema = {"type": "object", "properties": {**dict.fromkeys(COMMON_KEYS, True),
                                                **properties},
              "required": list(required), "additionalProperties": False}
    return Schema(schema, {name: _passes(test) for name, test in FORMATS.items()})


def _passes(test: Callable[[str], str | None]) -> Callable[[str], bool]:
    return lambda value: not isinstance(value, str) or test(value) is None


def config_problems_for(builtin: str, config: Mapping[str, Any], schema: Schema) -> Problems:
    """Missing, unknown and wrong keys of `config` for the built-in `builtin`: required keys
    first, then in the order the config gives its keys."""
    given = {key: value for key, value in config.items() if value is not None}
    order = {key: i for i, key in enumerate(given)}
    words = _Words(builtin, schema)
    found = [problem for v in schema.violations(given) for problem in words.problems(v)]
    found += _infinite(schema.schema, given, ())
    found = list(dict.fromkeys(found))
    first = [p for p in found if p[1] == f"required by smevals:{builtin}"]
    rest = sorted((p for p in found if p not in first),
                  key=lambda p: order.get(p[0].split(".")[0], len(order)))
    return first + rest


def _infinite(node: object, value: object, path: tuple[str, ...]) -> Problems:
    """`.inf` or `.nan` where the schema wants a number (at any depth)."""
    if not isinstance(node, dict):
        return []
    if node.get("type") == "number" and not _finite(value):
        return [(".".join(path), f"must be finite, not {value!r}")]
    props = node.get("properties", {})
    if not isinstance(value, dict):
        return []
    return [p for key, sub in value.items() if key in props
            for p in _infinite(props[key], sub, (*path, str(key)))]


def _finite(value: object) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def unknown_key_message(builtin: str, key: str, known: Iterable[str]) -> str:
    names = sorted(set(known) | COMMON_KEYS)
    close = difflib.get_close_matches(key, names, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return f"unknown key for smevals:{builtin}; {hint}known keys: {', '.join(names)}"


class _Words:
    """Violations worded for a config's author."""

    def __init__(self, builtin: str, schema: Schema) -> None:
        self.builtin, self.schema = builtin, schema

    def problems(self, v: Violation) -> Problems:
        where = ".".join(map(str, v.path))
        if v.keyword == "required":
            return [(str(key), f"required by smevals:{self.builtin}") for key in v.value
                    if isinstance(v.instance, dict) and key not in v.instance]
        if v.keyword == "additionalProperties":
            return [self._unknown(v, key) for key in _extra(v)]
        if v.keyword != "type" and not _finite(v.instance):
            return []       # said once, by config_problems_for
        return [(where, self._message(v))]

    def _unknown(self, v: Violation, key: str) -> tuple[str, str]:
        if not v.path:
            known = self.schema.schema["properties"]
            return str(key), unknown_key_message(self.builtin, str(key), known)
        where = ".".join(map(str, (*v.path, key)))
        return where, f"unknown key (known: {', '.join(sorted(v.schema['properties']))})"

    def _message(self, v: Violation) -> str:
        value, instance = v.value, v.instance
        if isinstance(instance, str) and not instance.strip() and v.keyword != "type":
            return "must not be empty"
        if v.keyword == "type":
            return _custom(v) or f"must be {_a(value)}, not {type_name(instance)}"
        bounds = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=",
                  "exclusiveMaximum": "<"}
        if v.keyword in bounds:
            return f"must be {bounds[v.keyword]} {value:g}, not {instance!r}"
        if v.keyword == "format" and value in FORMATS:
            return FORMATS[value](instance) or v.message
        return _custom(v) or v.message


def _custom(v: Violation) -> str | None:
    words = v.schema.get("x-problem")
    if isinstance(words, dict):
        words = words.get(v.keyword)
    return words.format(value=v.instance) if isinstance(words, str) else None


def _extra(v: Violation) -> list[Any]:
    named = v.schema.get("properties", {})
    return [key for key in v.instance if key not in named] if isinstance(v.instance, dict) \
        else []


def _a(kind: Any) -> str:
    names = {"object": "a mapping", "array": "a list", "integer": "an integer"}
    return names.get(kind, f"a {kind}")
