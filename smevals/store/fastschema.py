"""A quick yes/no check of a record against its JSON Schema, for `verify`.

jsonschema takes about a millisecond per record; verify meets hundreds of thousands. The
record schemas use a small part of JSON Schema, which is compiled here into plain Python
predicates. Only a record this check rejects is handed to jsonschema, which explains why.
A schema using a keyword not handled here is checked by jsonschema alone.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from importlib import resources
from typing import Any

import orjson

Check = Callable[[Any], bool]

_IGNORED = {"$schema", "$id", "title", "description", "$defs", "$comment", "default",
            "examples"}
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,), "array": (list,), "string": (str,), "boolean": (bool,),
    "null": (type(None),), "number": (int, float), "integer": (int,),
}


class Unsupported(Exception):
    """The schema uses a keyword this module does not compile."""


@functools.cache
def record_schema(kind: str) -> dict[str, Any]:
    """The packaged `<kind>.schema.json` (any kind: eval, task, config, grader, run, grade,
    usage), found through the installed package."""
    data = resources.files("smevals").joinpath("schemas", f"{kind}.schema.json").read_bytes()
    schema: dict[str, Any] = orjson.loads(data)
    return schema


@functools.cache
def record_validator(kind: str) -> Any:
    """jsonschema's validator for a record kind (slow, but it says why)."""
    import jsonschema

    return jsonschema.Draft202012Validator(record_schema(kind))


@functools.cache
def quick_check(kind: str) -> Check | None:
    """The compiled check for a record kind, or None when its schema cannot be compiled."""
    try:
        return compile_schema(record_schema(kind))
    except Unsupported:
        return None


def compile_schema(schema: dict[str, Any]) -> Check:
    """A predicate equivalent to validating against `schema` (raises Unsupported)."""
    try:
        return _compile(schema, schema)
    except RecursionError:
        raise Unsupported("recursive $ref") from None


def _compile(node: Any, root: dict[str, Any]) -> Check:
    if node is True or node == {}:
        return lambda v: True
    if not isinstance(node, dict):
        raise Unsupported(repr(node))
    checks = [_keyword(key, value, root, node) for key, value in node.items()
              if key not in _IGNORED]
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)

    def every(v: Any) -> bool:
        for check in checks:      # noqa: SIM110  (quicker than all() of a generator)
            if not check(v):
                return False
        return True

    return every


def _keyword(key: str, value: Any, root: dict[str, Any], node: dict[str, Any]) -> Check:
    if key in _SIZES:
        return _size(key, value)
    if key in _BOUNDS:
        return _bound(key, value)
    if key in _PLAIN:
        return _PLAIN[key](value)
    if key == "additionalProperties":
        return _additional(value, node, root)
    if key in ("oneOf", "anyOf"):
        return _choice(key, [_compile(sub, root) for sub in value])
    if key == "properties":
        return _properties(value, root)
    if key == "items":
        return _items(_compile(value, root))
    if key == "$ref":
        return _ref(value, root)
    raise Unsupported(key)


def _required(value: list[str]) -> Check:
    names = frozenset(value)
    return lambda v: type(v) is not dict or names.issubset(v.keys())


def _pattern(value: str) -> Check:
    found = re.compile(value).search
    return lambda v: type(v) is not str or found(v) is not None


def _const(value: Any) -> Check:
    if type(value) is str:                      # the common case, without _same's walk
        return lambda v: type(v) is str and v == value
    return lambda v: _same(v, value)


def _enum(value: list[Any]) -> Check:
    if all(type(option) is str for option in value):
        options = frozenset(value)
        return lambda v: type(v) is str and v in options
    return lambda v: any(_same(v, option) for option in value)


def _type(value: Any) -> Check:
    """Exact types: records come from orjson, which makes no subclasses."""
    names = value if isinstance(value, list) else [value]
    allowed = frozenset(t for name in names for t in _TYPES[name])
    if "integer" in names and "number" not in names:
        return lambda v: type(v) in allowed or (type(v) is float and v.is_integer())
    return lambda v: type(v) in allowed


def _items(item: Check) -> Check:
    def check(v: Any) -> bool:
        if type(v) is list:
            for x in v:
                if not item(x):
                    return False
        return True

    return check


def _properties(value: dict[str, Any], root: dict[str, Any]) -> Check:
    props = [(name, _compile(sub, root)) for name, sub in value.items()]

    def check(v: Any) -> bool:
        if type(v) is dict:
            for name, sub in props:
                if name in v and not sub(v[name]):
                    return False
        return True

    return check


_BOUNDS: dict[str, Callable[[Any, Any], bool]] = {
    "minimum": lambda v, limit: v >= limit, "maximum": lambda v, limit: v <= limit,
    "exclusiveMinimum": lambda v, limit: v > limit,
    "exclusiveMaximum": lambda v, limit: v < limit,
}
_SIZES: dict[str, tuple[type, Callable[[int, int], bool]]] = {
    "minLength": (str, lambda n, limit: n >= limit),
    "maxLength": (str, lambda n, limit: n <= limit),
    "minItems": (list, lambda n, limit: n >= limit),
    "maxItems": (list, lambda n, limit: n <= limit),
}


_PLAIN: dict[str, Callable[[Any], Check]] = {
    "type": lambda value: _type(value), "required": _required, "pattern": _pattern,
    "const": _const, "enum": _enum,
}


def _bound(key: str, limit: float) -> Check:
    holds = _BOUNDS[key]

    def check(v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, int | float):
            return True
        return holds(v, limit)

    return check


def _size(key: str, limit: int) -> Check:
    """Lengths of strings (in code points, as JSON Schema counts) and of arrays."""
    kind, holds = _SIZES[key]
    return lambda v: type(v) is not kind or holds(len(v), limit)  # type: ignore[arg-type]


def _additional(value: Any, node: dict[str, Any], root: dict[str, Any]) -> Check:
    """Keys not named under `properties` (patternProperties is not handled)."""
    if "patternProperties" in node:
        raise Unsupported("patternProperties")
    named = frozenset(node.get("properties", {}))
    extra = _compile(value, root) if value is not False else None

    def check(v: Any) -> bool:
        if type(v) is not dict:
            return True
        others = [key for key in v if key not in named]
        if extra is None:
            return not others
        return all(extra(v[key]) for key in others)

    return check


def _choice(key: str, subs: list[Check]) -> Check:
    if key == "anyOf":
        return lambda v: any(sub(v) for sub in subs)
    return lambda v: sum(1 for sub in subs if sub(v)) == 1


def _ref(ref: str, root: dict[str, Any]) -> Check:
    if not ref.startswith("#/"):
        raise Unsupported(ref)
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return _compile(node, root)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 equals 1.0, but true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)
