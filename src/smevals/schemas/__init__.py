"""The packaged JSON Schemas (the `*.schema.json` files beside this module) and the one
validator of records, authoring files and option mappings.

Validation runs on jsonschema-rs (Draft 2020-12, Rust; its regex engine is the linear-time
Rust `regex` crate). Each schema is compiled once per process; jsonschema-rs itself is
imported on the first validation, not with this module. Data that is not plain JSON (a YAML
date, a non-string key, `.inf`) cannot cross into Rust unchanged: such a document is
validated by jsonschema instead, with the same result and the same messages.

Every violation comes out as a `Violation` (where in the document, which keyword, the
schema node holding it), with a message worded as jsonschema words it, so that errors keep
one shape whichever engine found them.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

import orjson

from smevals.schemas.words import say

LARGE = 1 << 20     # bytes of JSON above which a document's violations are found lazily
LARGE_MOST = 100    # and at most this many of them are kept
SCHEMA_NAMES = ("eval", "task", "config", "grader", "run", "grade", "usage", "fixture")

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Violation:
    """One way a document breaks its schema."""

    path: Path                      # where in the document (keys and list indexes)
    keyword: str                    # the schema keyword that failed (`type`, `required`...)
    value: Any                      # that keyword's value in the schema
    schema: dict[str, Any]          # the schema node holding the keyword
    instance: Any                   # the part of the document at `path`
    message: str                    # worded as jsonschema words it
    context: tuple[Violation, ...] = ()   # for anyOf / oneOf: the errors of the branches

    @property
    def slashed(self) -> str:
        """`checks/0/checker`, or `(top level)`."""
        return "/".join(map(str, self.path)) or "(top level)"


class Schema:
    """A JSON Schema compiled on first use; `formats` are extra `format` checks by name."""

    def __init__(self, schema: dict[str, Any],
                 formats: dict[str, Callable[[str], bool]] | None = None) -> None:
        self.schema = schema
        self.formats = formats or {}

    @functools.cached_property
    def _fast(self) -> Any:
        import jsonschema_rs

        return jsonschema_rs.Draft202012Validator(
            self.schema, formats=self.formats or None, validate_formats=bool(self.formats),
            pattern_options=jsonschema_rs.RegexOptions(), offline=True)

    @functools.cached_property
    def _slow(self) -> Any:
        """jsonschema, for documents that are not plain JSON."""
        import jsonschema

        checker = jsonschema.FormatChecker(formats=())
        for name, test in self.formats.items():
            checker.checks(name)(test)  # type: ignore[type-var]
        return jsonschema.Draft202012Validator(self.schema, format_checker=checker)

    def is_valid(self, data: object) -> bool:
        try:
            if self._fast.is_valid(data):
                return True
        except ValueError:          # not plain JSON
            return bool(self._slow.is_valid(data))
        return _nonfinite(data) and bool(self._slow.is_valid(data))

    def violations(self, data: object) -> list[Violation]:
        """Every violation, ordered by path (and, at one path, as the schema lists them).

        A document of more than LARGE bytes of JSON is checked by jsonschema, lazily, and only
        its first LARGE_MOST violations are kept: jsonschema-rs hands each error a fresh copy
        of the part of the document it is about, so a 2 MB record that breaks its schema at
        the top made it use 800 MB and 4 s (bench/memory.py)."""
        try:
            if _nonfinite(data):    # jsonschema-rs would see null for .inf and .nan
                raise ValueError
            if _large(data):
                return sorted(self._lazy(data, LARGE_MOST), key=_order)
            found = [self._from_rs(e) for e in self._fast.iter_errors(data)]
        except ValueError:
            found = [_from_py(e) for e in self._slow.iter_errors(data)]
        return sorted(found, key=_order)

    def _lazy(self, data: object, most: int) -> list[Violation]:
        return [_from_py(e) for e in itertools.islice(self._slow.iter_errors(data), most)]

    def first(self, data: object) -> Violation | None:
        """The first violation in `violations` order, or None when `data` is valid."""
        if self.is_valid(data):
            return None
        found = self.violations(data)
        return found[0] if found else None

    def _from_rs(self, error: Any) -> Violation:
        where = list(error.schema_path)
        kind = error.kind
        node: Any = _walk(self.schema, where[:-1])
        keyword = str(where[-1]) if where else kind.name
        if not isinstance(node, dict) or keyword not in node:  # a false schema
            node, keyword = {}, "falseSchema"
        value = node.get(keyword)
        instance = error.instance
        if type(kind).__name__ == "PropertyNames":   # as jsonschema: the name at fault
            instance = kind.error.instance
        branches = getattr(kind, "context", None) or []
        context = tuple(self._from_rs(e) for branch in branches for e in branch)
        details = kind.as_dict()
        if type(kind).__name__ == "OneOfMultipleValid":
            details["valid"] = [i for i, branch in enumerate(branches) if not branch]
        message = say(keyword, value, instance, details, error.message)
        return Violation(tuple(error.instance_path), keyword, value, node, instance, message,
                         context)


def _large(data: object) -> bool:
    """Whether `data` is more than LARGE bytes as JSON (False when it is not plain JSON)."""
    try:
        return len(orjson.dumps(data)) > LARGE
    except (TypeError, orjson.JSONEncodeError):
        return False


def _nonfinite(data: object) -> bool:
    """Whether `data` holds an infinite or NaN number (YAML `.inf`, `.nan`)."""
    if type(data) is float:
        return not math.isfinite(data)
    if isinstance(data, dict):
        return any(_nonfinite(v) for v in data.values())
    if isinstance(data, list | tuple):
        return any(_nonfinite(v) for v in data)
    return False


def _walk(node: Any, parts: list[str | int]) -> Any:
    """The schema node at `parts` (None when the path leads nowhere, e.g. a remote $ref)."""
    try:
        for part in parts:
            node = node[part]
    except (KeyError, IndexError, TypeError):
        return None
    return node


def _order(v: Violation) -> tuple[list[str], int]:
    keys = list(v.schema)
    return list(map(str, v.path)), keys.index(v.keyword) if v.keyword in keys else len(keys)


def _from_py(error: Any) -> Violation:
    node = error.schema if isinstance(error.schema, dict) else {}
    context = tuple(_from_py(e) for e in error.context or ())
    return Violation(tuple(error.absolute_path), str(error.validator), error.validator_value,
                     node, error.instance, str(error.message), context)


@functools.cache
def load_schema(kind: str) -> dict[str, Any]:
    """The packaged `<kind>.schema.json` (eval, task, config, grader, run, grade, usage,
    fixture), found through the installed package."""
    data = resources.files(__name__).joinpath(f"{kind}.schema.json").read_bytes()
    schema: dict[str, Any] = orjson.loads(data)
    return schema


@functools.cache
def packaged(kind: str) -> Schema:
    """The compiled packaged schema of `kind` (compiled once per process)."""
    return Schema(load_schema(kind))


def violations(kind: str, data: object) -> list[Violation]:
    """Every way `data` breaks `<kind>.schema.json` (none when it is valid)."""
    schema = packaged(kind)
    return [] if schema.is_valid(data) else schema.violations(data)
