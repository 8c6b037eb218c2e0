"""The one validator (smevals.schemas, on jsonschema-rs) agrees with jsonschema on every
document it is shown: the same verdict, and the same first error (place and words)."""

from __future__ import annotations

import copy
import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smevals.schemas import Schema, load_schema, packaged


def reference(schema: dict[str, Any]) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(schema)


def agree(schema: Schema, doc: Any) -> None:
    """Same verdict as jsonschema; when invalid, the same first error (path and message)."""
    slow = reference(schema.schema)
    assert schema.is_valid(doc) == slow.is_valid(doc), doc
    found = schema.first(doc)
    if found is None:
        return
    first = sorted(slow.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    assert [(list(v.path), v.message) for v in schema.violations(doc)][:1] in [
        [(list(e.absolute_path), e.message)] for e in first
        if list(map(str, e.absolute_path)) == list(map(str, first[0].absolute_path))], doc

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
    assert packaged(kind).is_valid(RUN if kind == "run" else GRADE)
    assert packaged(kind).violations(RUN if kind == "run" else GRADE) == []


@settings(max_examples=300)
@given(st.sampled_from(["run", "grade"]), st.data(), JSON, st.booleans())
def test_agrees_with_jsonschema(kind: str, data: st.DataObject, new: Any, drop: bool):
    base = RUN if kind == "run" else GRADE
    where = data.draw(st.sampled_from(paths(base)))
    agree(packaged(kind), mutate(base, where, new, drop))


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
        assert packaged(kind).is_valid(doc), (kind, doc)


@settings(max_examples=400)
@given(st.data(), JSON | st.text(max_size=3), st.booleans())
def test_agrees_with_jsonschema_on_authoring_files(data: st.DataObject, new: Any, drop: bool):
    kind, base = data.draw(st.sampled_from(DOCS))
    where = data.draw(st.sampled_from(paths(base)))
    agree(packaged(kind), mutate(base, where, new, drop))


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
    check = Schema(schema)
    for value in good:
        assert check.is_valid(value) and reference(schema).is_valid(value), value
    for value in bad:
        assert not check.is_valid(value), value
        agree(check, value)


def test_every_keyword_of_2020_12_and_json_numbers():
    """No keyword is left out (the hand subset refused `if` and `patternProperties`)."""
    cond = Schema({"type": "object", "if": {"required": ["a"]}, "then": {"required": ["b"]}})
    assert cond.is_valid({"b": 1}) and not cond.is_valid({"a": 1})
    pats = Schema({"patternProperties": {"^x": {"type": "integer"}},
                   "additionalProperties": False})
    assert pats.is_valid({"x1": 2}) and not pats.is_valid({"x1": "s"})
    assert [v.keyword for v in pats.violations({"y": 1})] == ["additionalProperties"]
    assert Schema({"type": "integer"}).is_valid(2.0)
    assert not Schema({"type": "integer"}).is_valid(True)
    assert Schema({"enum": [1, "a"]}).is_valid(1.0) and not Schema({"const": 1}).is_valid(True)


@pytest.mark.parametrize("doc", [
    {"name": datetime.date(2026, 1, 2)}, {1: "one"}, {"name": "t", "tags": {"a"}},
    {"name": float("inf")}, {"name": "t", "tags": [float("nan")], "x": 1},
])
def test_data_that_is_not_plain_json_gets_the_same_verdict_and_words(doc: Any):
    """YAML can give dates, sets and integer keys, which cannot cross into Rust."""
    schema = Schema({"type": "object", "properties": {"name": {"type": "string"},
                                                      "tags": {"type": "array"}},
                     "additionalProperties": False})
    agree(schema, doc)
    assert schema.violations(doc)[0].message == next(reference(schema.schema).iter_errors(
        doc)).message


def test_infinite_numbers_are_numbers():
    """jsonschema-rs reads .inf as null; such a document is left to jsonschema."""
    config = {"name": "c", "runner": "./r.sh", "timeout": float("inf")}
    assert packaged("config").is_valid(config) == reference(load_schema("config")).is_valid(
        config)
    agree(packaged("config"), {**config, "timeout": float("-inf")})


def test_errors_say_where_and_which_keyword():
    bad = mutate(RUN, ("files", 0, "sha256"), "xyz", False)
    (found,) = packaged("run").violations(bad)
    assert (found.path, found.keyword, found.value) == (("files", 0, "sha256"), "pattern",
                                                         "^[0-9a-f]{64}$")
    assert found.message == "'xyz' does not match '^[0-9a-f]{64}$'"
    assert found.slashed == "files/0/sha256"
    assert found.schema == {"type": "string", "pattern": "^[0-9a-f]{64}$"}
    assert load_schema("run")["$id"] == "https://smevals.dev/schemas/run.schema.json"
