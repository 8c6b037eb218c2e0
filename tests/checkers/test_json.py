"""json_valid, json_field, json_schema, json_path_assertion, and `extract: json`."""

from __future__ import annotations

import pytest

from smevals.checkers import option_problems
from tests.helpers.checkers import Case, case, run, verify

DOC = '{"a": [1, {"b": 2.0}], "s": "x", "n": null, "t": true, "": "empty"}'

TABLE = [
    case("json_valid", "object", {}, DOC, score=1.0),
    case("json_valid", "scalar", {}, " 42 "),
    case("json_valid", "invalid", {}, "{a: 1}", ok=False, score=0.0, notes="not valid JSON"),
    case("json_valid", "nan", {}, "NaN", ok=False),
    case("json_valid", "empty", {}, "", ok=False),
    case("json_valid", "trailing-data", {}, "{} {}", ok=False),
    case("json_valid", "extract-fenced", {"extract": "json"}, 'Here:\n```json\n{"a": 1}\n```\n'),
    case("json_valid", "extract-bare", {"extract": "json"}, 'The answer is {"a": [1, 2]}. Bye'),
    case(
        "json_valid",
        "extract-none",
        {"extract": "json"},
        "no json here",
        ok=False,
        notes="no JSON value found",
    ),
    case(
        "json_valid", "bad-extract", {"extract": "yaml"}, "{}", ok=False, notes="option 'extract'"
    ),
    case("json_field", "nested", {"path": "a.1.b", "value": 2}, DOC, score=1.0),
    case("json_field", "negative-index", {"path": "a.-1.b", "value": 2}, DOC),
    case(
        "json_field",
        "negative-out-of-range",
        {"path": "a.-3", "value": 1},
        DOC,
        ok=False,
        notes="not found",
    ),
    case("json_field", "empty-segments", {"path": "a..0", "value": 1}, DOC),
    case("json_field", "whole-document", {"path": "", "value": [1]}, "[1]"),
    case("json_field", "deep-equal-key-order", {"path": "a.1", "value": {"b": 2}}, DOC),
    case("json_field", "bool-is-not-int", {"path": "t", "value": 1}, DOC, ok=False, score=0.0),
    case("json_field", "string-is-not-number", {"path": "a.0", "value": "1"}, DOC, ok=False),
    case("json_field", "explicit-null", {"path": "n", "value": None}, DOC),
    case(
        "json_field",
        "missing-path-fails-even-for-null",
        {"path": "zz", "value": None},
        DOC,
        ok=False,
        notes="path 'zz' not found",
    ),
    case(
        "json_field",
        "missing-value-option",
        {"path": "zz"},
        DOC,
        ok=False,
        score=None,
        notes="option 'value'",
    ),
    case("json_field", "invalid-json", {"path": "a", "value": 1}, "nope", ok=False, score=0.0),
    case("json_field", "index-syntax-strict", {"path": "a.+1", "value": {"b": 2}}, DOC, ok=False),
    case("json_path_assertion", "equals", {"path": "a.1.b", "equals": 2}, DOC, score=1.0),
    case("json_path_assertion", "presence", {"path": "s"}, DOC),
    case("json_path_assertion", "absent", {"path": "zz"}, DOC, ok=False, notes="not found"),
    case("json_path_assertion", "exists-false", {"path": "zz", "exists": False}, DOC),
    case(
        "json_path_assertion",
        "exists-false-but-present",
        {"path": "s", "exists": False},
        DOC,
        ok=False,
    ),
    case(
        "json_path_assertion",
        "exists-true-ignores-equals",
        {"path": "s", "exists": True, "equals": "nope"},
        DOC,
    ),
    case("json_path_assertion", "no-negative-index", {"path": "a.-1"}, DOC, ok=False),
    case("json_path_assertion", "empty-segment-is-a-key", {"path": ""}, DOC),
    case("json_path_assertion", "type-strict", {"path": "a.0", "equals": "1"}, DOC, ok=False),
    case("json_path_assertion", "not-json", {"path": "a"}, "plain text", ok=False),
    case(
        "json_path_assertion",
        "bad-exists",
        {"path": "a", "exists": "yes"},
        DOC,
        ok=False,
        notes="option 'exists'",
    ),
    case("json_schema", "valid", {"schema": {"type": "object", "required": ["a"]}}, DOC, score=1.0),
    case(
        "json_schema",
        "missing-required",
        {"schema": {"required": ["zz"]}},
        DOC,
        ok=False,
        score=0.0,
        notes="'zz' is a required property",
    ),
    case(
        "json_schema",
        "full-2020-12-keywords",
        {"schema": {"properties": {"a": {"prefixItems": [{"const": 1}], "minItems": 3}}}},
        DOC,
        ok=False,
        notes="/a",
    ),
    case(
        "json_schema",
        "additional-properties-false",
        {"schema": {"properties": {"x": {}}, "additionalProperties": False}},
        '{"y": 1}',
        ok=False,
    ),
    case(
        "json_schema",
        "pattern-properties",
        {
            "schema": {
                "patternProperties": {"^n_": {"type": "number"}},
                "additionalProperties": False,
            }
        },
        '{"n_a": 1, "n_b": "x"}',
        ok=False,
        notes="/n_b",
    ),
    case(
        "json_schema",
        "format-asserted",
        {"schema": {"format": "email"}},
        '"not-an-email"',
        ok=False,
    ),
    case(
        "json_schema",
        "unsupported-dollar-schema",
        {"schema": {"$schema": "https://example.com/x"}},
        "{}",
        ok=False,
        score=None,
        notes="unsupported $schema",
    ),
    case(
        "json_schema",
        "draft-07",
        {"schema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}},
        "{}",
    ),
    case(
        "json_schema",
        "invalid-schema",
        {"schema": {"type": "wat"}},
        "{}",
        ok=False,
        score=None,
        notes="invalid JSON Schema",
    ),
    case(
        "json_schema",
        "remote-ref-not-fetched",
        {"schema": {"$ref": "https://example.com/s"}},
        "{}",
        ok=False,
        score=None,
        notes="could not be applied",
    ),
    case(
        "json_schema",
        "re2-pattern",
        {"schema": {"pattern": "(a)\\1"}},
        '"aa"',
        ok=False,
        notes="RE2 does not support backreferences",
    ),
    case(
        "json_schema",
        "unevaluated-with-patterns",
        {"schema": {"patternProperties": {"^a": {}}, "unevaluatedProperties": False}},
        "{}",
        ok=False,
        notes="unevaluatedProperties together with patternProperties",
    ),
    case("json_schema", "task-schema", {}, "3", task={"schema": {"type": "integer"}}),
    case("json_schema", "no-schema", {}, "3", ok=False, notes="'schema' key"),
    case("json_schema", "boolean-schema-rejected", {"schema": True}, "3", ok=False),
    case("json_schema", "not-json", {"schema": {}}, "{", ok=False, score=0.0),
]


@pytest.mark.parametrize("name,c", TABLE)
def test_table(name: str, c: Case) -> None:
    verify(name, c)


def test_schema_pattern_runs_on_re2() -> None:
    schema = {"properties": {"s": {"pattern": "(a+)+$"}}}
    result = run("json_schema", {"schema": schema}, '{"s": "' + "a" * 50000 + '!"}')
    assert result.ok is False


def test_schema_errors_are_capped_at_five() -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    result = run("json_schema", {"schema": schema}, "[1, 2, 3, 4, 5, 6, 7]")
    assert len(result.details["errors"]) == 5


def test_validate_checks_the_schema() -> None:
    assert option_problems("json_schema", {"schema": {"type": 5}})[0][0] == "schema"
    assert option_problems("json_schema", {"schema": {"type": "object"}}) == []


def test_extract_prefers_a_fenced_block() -> None:
    output = 'I think [1] is it.\n```\n{"answer": 2}\n```'
    assert run("json_field", {"path": "answer", "value": 2, "extract": "json"}, output).ok
