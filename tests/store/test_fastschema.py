"""verify's quick schema check agrees with jsonschema on every record it is shown."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smevals.store.fastschema import Unsupported, compile_schema, record_schema, record_validator

RUN = {
    "format": 1, "kind": "run", "eval": "e", "task": {"name": "t"},
    "config": {"name": "c", "runner": "r", "model": "m"}, "model": "m",
    "inputs": {"hash": "h", "task": "t", "config": "c", "runner": "r"}, "sample": 0,
    "started": "s", "ended": "e", "duration_seconds": 1.5, "exit_code": None,
    "status": "ok", "failure": {"kind": "exit", "detail": "d"},
    "files": [{"path": "a", "size": 1, "sha256": "0" * 64}, {"path": "l", "symlink": "a"}],
}
GRADE = {
    "format": 1, "kind": "grade", "eval": "e",
    "run": {"id": "i", "rel": "r", "task": "t", "config": "c", "model": "m"},
    "grader": {"name": "g", "version": "v"}, "grading_hash": "h", "graded": "g",
    "outcome": "pass", "score": None, "tags": ["a"], "metrics": {},
    "checks": [{"checker": "c", "ok": True, "score": 1, "tags": []}], "files": [],
}
JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2)
                    | st.sampled_from(["", "run", "ok", "exit", "0" * 64, "pass"]),
                    lambda inner: st.lists(inner, max_size=2)
                    | st.dictionaries(st.sampled_from(["path", "name", "kind", "x"]), inner,
                                      max_size=2), max_leaves=4)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for key, sub in value.items():
            out += paths(sub, (*prefix, key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            out += paths(sub, (*prefix, i))
    return out


def mutate(record: dict[str, Any], where: tuple[Any, ...], new: Any, drop: bool) -> Any:
    doc = copy.deepcopy(record)
    if not where:
        return new
    parent = doc
    for key in where[:-1]:
        parent = parent[key]
    if drop and isinstance(parent, dict):
        del parent[where[-1]]
    else:
        parent[where[-1]] = new
    return doc


@pytest.mark.parametrize("kind", ["run", "grade"])
def test_the_record_schemas_compile(kind: str):
    check = compile_schema(record_schema(kind))
    assert check(RUN if kind == "run" else GRADE)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["run", "grade"]), st.data(), JSON, st.booleans())
def test_agrees_with_jsonschema(kind: str, data: st.DataObject, new: Any, drop: bool):
    base = RUN if kind == "run" else GRADE
    where = data.draw(st.sampled_from(paths(base)))
    doc = mutate(base, where, new, drop)
    quick = compile_schema(record_schema(kind))(doc)
    assert quick == record_validator(kind).is_valid(doc), (where, doc)


def authoring_docs() -> list[tuple[str, Any]]:
    """Every eval, task, config and grader file of the example suites, parsed."""
    import yaml

    root = Path(__file__).resolve().parents[2] / "suites"
    found = [("eval", p) for p in sorted(root.glob("*/eval.yaml"))]
    found += [(kind, p) for kind in ("task", "config", "grader")
              for p in sorted(root.glob(f"*/{kind}s/*.yaml"))]
    return [(kind, yaml.safe_load(p.read_text())) for kind, p in found]


DOCS = authoring_docs()


def test_the_authoring_schemas_compile_and_accept_the_suites():
    assert {kind for kind, _doc in DOCS} == {"eval", "task", "config", "grader"}
    for kind, doc in DOCS:
        assert compile_schema(record_schema(kind))(doc), (kind, doc)


@settings(max_examples=400, deadline=None)
@given(st.data(), JSON | st.text(max_size=3), st.booleans())
def test_agrees_with_jsonschema_on_authoring_files(data: st.DataObject, new: Any, drop: bool):
    kind, base = data.draw(st.sampled_from(DOCS))
    where = data.draw(st.sampled_from(paths(base)))
    doc = mutate(base, where, new, drop)
    quick = compile_schema(record_schema(kind))(doc)
    assert quick == record_validator(kind).is_valid(doc), (kind, where, doc)


@pytest.mark.parametrize(("schema", "good", "bad"), [
    ({"minLength": 2}, ["ab", "é!", 5], ["a", ""]),
    ({"maxLength": 1}, ["", "é", None], ["ab"]),
    ({"minItems": 1, "maxItems": 2}, [[1], [1, 2], "x"], [[], [1, 2, 3]]),
    ({"exclusiveMinimum": 0}, [0.5, 1, True, "x"], [0, -1.5]),
    ({"exclusiveMaximum": 1}, [0.5, 0], [1, 2.5]),
    ({"properties": {"a": {}}, "additionalProperties": False}, [{"a": 1}, {}, [1]],
     [{"b": 1}]),
    ({"properties": {"a": {}}, "additionalProperties": {"type": "string"}},
     [{"a": 1, "b": "x"}], [{"b": 1}]),
    ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, [-1, 0.5], [3, -0.5]),
    ({"anyOf": [{"type": "string"}, {"type": "null"}]}, ["x", None], [1, []]),
])
def test_added_keywords(schema: dict[str, Any], good: list[Any], bad: list[Any]):
    check = compile_schema(schema)
    import jsonschema

    for value in good:
        assert check(value) and jsonschema.Draft202012Validator(schema).is_valid(value), value
    for value in bad:
        assert not check(value), value
        assert not jsonschema.Draft202012Validator(schema).is_valid(value), value


def test_unknown_keywords_are_left_to_jsonschema():
    with pytest.raises(Unsupported):
        compile_schema({"type": "object", "if": {"type": "string"}})
    with pytest.raises(Unsupported):
        compile_schema({"patternProperties": {"a": {}}, "additionalProperties": False})
    assert compile_schema({"type": "integer"})(2.0) and not compile_schema({"type": "integer"})(
        True)
    assert compile_schema({"enum": [1, "a"]})(1.0) and not compile_schema({"const": 1})(True)
