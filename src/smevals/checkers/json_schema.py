"""json_schema: full JSON Schema 2020-12 (and the older drafts named by `$schema`)
through jsonschema, with every pattern keyword run on RE2 instead of Python's re."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from jsonschema import exceptions, validators
from referencing import Registry

from smevals import caches
from smevals.checkers.base import Checker, CheckFailure, CheckInput, CheckResult, binary, checker
from smevals.checkers.json_checks import load_json
from smevals.checkers.regex import compile_re2

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

CHECKERS: dict[str, Checker] = {}

_MAX_ERRORS = 5
_CACHE: dict[str, Any] = {}
caches.register(__name__, "_CACHE")
_CACHE_SIZE = 128


def _re2_search(pattern: str, text: str) -> bool:
    return compile_re2(pattern).search(text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    if validator.is_type(instance, "string") and not _re2_search(pattern, instance):
        yield exceptions.ValidationError(f"{instance!r:.80} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _re2_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(validator: Any, extra_schema: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """additionalProperties, with patternProperties matched by RE2."""
    if not validator.is_type(instance, "object"):
        return
    known = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        k for k in instance if k not in known and not any(_re2_search(p, k) for p in patterns)
    ]
    if validator.is_type(extra_schema, "object"):
        for key in extras:
            yield from validator.descend(instance[key], extra_schema, path=key)
    elif extra_schema is False and extras:
        names = ", ".join(repr(k) for k in sorted(extras)[:10])
        yield exceptions.ValidationError(f"additional properties are not allowed: {names}")


_RE2_KEYWORDS = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional,
}


def _validator_class(schema: dict[str, Any]) -> type[Validator]:
    if not isinstance(schema.get("$schema", ""), str):
        raise CheckFailure("unsupported $schema: it must be a URI string")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            base = validators.validator_for(schema)  # warns on an unknown $schema
        except DeprecationWarning:
            raise CheckFailure(f"unsupported $schema: {schema.get('$schema')!r}") from None
    extended: type[Validator] = validators.extend(  # type: ignore[no-untyped-call]
        base, _RE2_KEYWORDS)
    return extended


def _walk(node: object) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def _check_patterns(schema: dict[str, Any]) -> None:
    """Every pattern must compile on RE2; RE2 cannot serve unevaluatedProperties' patterns."""
    nodes = list(_walk(schema))
    for node in nodes:
        if isinstance(node.get("pattern"), str):
            compile_re2(node["pattern"])
        for key in node.get("patternProperties", {}) or {}:
            compile_re2(str(key))
    if any("unevaluatedProperties" in n for n in nodes) and any(
        n.get("patternProperties") for n in nodes
    ):
        raise CheckFailure(
            "unsupported JSON Schema: unevaluatedProperties together with patternProperties "
            "(patterns must run on RE2)"
        )


def compile_schema(schema: object) -> Any:
    """A validator for `schema`, cached; CheckFailure when unsupported or invalid."""
    if not isinstance(schema, dict):
        raise CheckFailure("the JSON Schema must be an object")
    try:
        key = json.dumps(schema, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        msg = "the JSON Schema must be plain JSON (string keys, finite numbers)"
        raise CheckFailure(msg) from None
    if key in _CACHE:
        return _CACHE[key]
    cls = _validator_class(schema)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        raise CheckFailure(f"invalid JSON Schema: {exc.message[:200]}") from None
    _check_patterns(schema)
    # An empty registry: a $ref to a remote URI fails instead of being fetched.
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER, registry=Registry())
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[key] = validator
    return validator


def _schema_problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    if "schema" not in opts:
        return []
    try:
        compile_schema(opts["schema"])
    except CheckFailure as exc:
        return [("schema", exc.reason)]
    return []


@checker(
    CHECKERS,
    "json_schema",
    "The input is JSON valid against a JSON Schema (2020-12 unless $schema says otherwise).",
    properties={"schema": {"type": "object", "x-expect": "a JSON Schema object"}},
    required=("schema",),
    task_keys={"schema": ("schema",)},
    reads="json",
    problems=_schema_problems,
)
def json_schema(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    validator = compile_schema(opts["schema"])
    label, doc = load_json(opts, inp)
    try:
        errors = [_describe(e) for e in _first_errors(validator, doc)]
    except Exception as exc:  # unresolvable $ref and friends: the schema is at fault
        raise CheckFailure(
            f"JSON Schema could not be applied: {type(exc).__name__}: {exc}"
        ) from None
    notes = f"{label} does not match the schema: " + "; ".join(errors)
    return binary(not errors, notes, errors=errors)


def _first_errors(validator: Any, doc: Any) -> list[Any]:
    found = []
    for error in validator.iter_errors(doc):
        found.append(error)
        if len(found) >= _MAX_ERRORS:
            break
    return found


def _describe(error: Any) -> str:
    where = "/" + "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message[:200]}"
