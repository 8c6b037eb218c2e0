"""contains, not_contains, exact, exact_match, blocklist."""

from __future__ import annotations

import pytest

from tests.helpers.checkers import Case, case, run, verify

TABLE = [
    # contains: a string value is the original smevals' check (case-sensitive, no score)
    case("contains", "original-pass", {"value": "hel"}, "hello", score=None),
    case(
        "contains",
        "original-notes",
        {"value": "zzz"},
        "hello",
        ok=False,
        score=None,
        notes="output.txt does not contain 'zzz'",
    ),
    case("contains", "original-case-sensitive", {"value": "HELLO"}, "hello", ok=False),
    case(
        "contains", "case-insensitive-string", {"value": "HELLO", "case_sensitive": False}, "hello"
    ),
    case(
        "contains",
        "list-partial-credit",
        {"value": ["a", "zz", "b", "yy"]},
        "A b",
        ok=False,
        score=0.5,
        notes="2/4 substrings found",
    ),
    case("contains", "list-threshold", {"value": ["a", "zz"], "threshold": 0.5}, "A", score=0.5),
    case("contains", "list-case-insensitive-by-default", {"value": ["HELLO"]}, "hello", score=1.0),
    case(
        "contains",
        "list-case-sensitive",
        {"value": ["HELLO"], "caseSensitive": True},
        "hello",
        ok=False,
        score=0.0,
    ),
    case("contains", "fragments-case-sensitive", {"fragments": ["Hello"]}, "hello", ok=False),
    case("contains", "task-expected", {}, "the answer is 42", task={"expected": "42"}),
    case("contains", "task-ref", {"value": {"task": "answer"}}, "x 7 y", task={"answer": "7"}),
    case("contains", "missing-value", {}, "hello", ok=False, score=None, notes="'expected' key"),
    case("contains", "empty-list", {"value": []}, "hello", ok=False, notes="option 'value'"),
    case("contains", "empty-string", {"value": ""}, "hello", ok=False, notes="option 'value'"),
    case(
        "contains",
        "both-forms",
        {"value": "a", "fragments": ["a"]},
        "a",
        ok=False,
        notes="only one of",
    ),
    case(
        "contains",
        "unknown-option",
        {"value": "a", "vlaue": "b"},
        "a",
        ok=False,
        notes="unknown option",
    ),
    case("contains", "wrong-type", {"value": True}, "true", ok=False, notes="got true"),
    case("contains", "number-from-task", {}, "it is 42", task={"expected": 42}, score=None),
    case("contains", "numbers-in-list", {"value": [42, "it"]}, "it is 42", score=1.0),
    case(
        "contains",
        "missing-task-key",
        {"value": {"task": "nope"}},
        "a",
        ok=False,
        notes="the Task has no key 'nope'",
    ),
    # not_contains
    case("not_contains", "pass", {"fragments": ["zebra"]}, "a cat", score=1.0),
    case(
        "not_contains",
        "fail",
        {"fragments": ["cat", "dog"]},
        "a cat",
        ok=False,
        score=0.0,
        notes="'cat'",
    ),
    case("not_contains", "case-sensitive", {"fragments": ["CAT"]}, "a cat"),
    case(
        "not_contains",
        "case-insensitive",
        {"fragments": ["CAT"], "case_sensitive": False},
        "a cat",
        ok=False,
    ),
    case("not_contains", "value-alias", {"value": "cat"}, "a cat", ok=False),
    case("not_contains", "empty-list", {"fragments": []}, "x", ok=False, score=None),
    case(
        "not_contains", "empty-member", {"fragments": ["a", ""]}, "x", ok=False, notes="fragments.1"
    ),
    case("not_contains", "missing", {}, "x", ok=False, notes="missing required option"),
    # exact (ai-eval-forge): lowercase, collapse whitespace
    case("exact", "normalised", {"value": "Hello   World"}, "  hello\nworld ", score=1.0),
    case("exact", "different", {"value": "hello"}, "hello!", ok=False, score=0.0),
    case("exact", "task-expected", {}, "PARIS", task={"expected": "paris"}),
    case("exact", "json-value", {"value": {"a": 1}}, '{"a":1}'),
    case("exact", "json-value-spacing", {"value": {"a": 1}}, '{"a": 1}', ok=False),
    case("exact", "missing", {}, "x", ok=False, score=None),
    case("exact", "null", {"value": None}, "null", ok=False, notes="other than null"),
    # exact_match (@caveman/evals)
    case("exact_match", "trim-and-case", {"expected": "Paris"}, " paris \n", score=1.0),
    case(
        "exact_match",
        "case-sensitive",
        {"expected": "Paris", "case_sensitive": True},
        "paris",
        ok=False,
        score=0.0,
    ),
    case("exact_match", "sorted-keys", {"expected": {"b": 2, "a": 1}}, '{"a": 1, "b": 2}'),
    case("exact_match", "number-vs-string", {"expected": 5}, "5"),
    case(
        "exact_match",
        "punctuation",
        {"expected": "Hello, world!", "remove_punctuation": True},
        "hello world",
    ),
    case(
        "exact_match",
        "punctuation-needs-strings",
        {"expected": 5, "remove_punctuation": True},
        "5",
        ok=False,
        notes="remove_punctuation needs a string",
    ),
    case(
        "exact_match",
        "bad-knob",
        {"expected": "a", "case_sensitive": "yes"},
        "a",
        ok=False,
        notes="option 'case_sensitive'",
    ),
    case(
        "exact_match",
        "extract-json",
        {"expected": {"a": 1}, "extract": "json"},
        'Sure:\n```json\n{"a": 1}\n```',
    ),
    case("exact_match", "missing-expected", {}, "x", ok=False, score=None),
    # blocklist: case-insensitive whole words
    case("blocklist", "clean", {"terms": ["cat"]}, "concatenate", score=1.0),
    case("blocklist", "hit", {"terms": ["cat"]}, "The CAT sat", ok=False, score=0.0, notes="'cat'"),
    case("blocklist", "hyphen-boundary", {"terms": ["openai"]}, "openai-compatible", ok=False),
    case("blocklist", "unicode-letter-is-not-a-boundary", {"terms": ["caf"]}, "café"),
    case("blocklist", "empty-list", {"terms": []}, "x", ok=False),
    case("blocklist", "blank-term", {"terms": [" "]}, "x", ok=False, notes="terms.0"),
    case("blocklist", "non-string", {"terms": [3]}, "3", ok=False),
]


@pytest.mark.parametrize("name,c", TABLE)
def test_table(name: str, c: Case) -> None:
    verify(name, c)


def test_contains_original_result_shape() -> None:
    assert run("contains", {"value": "hel"}, "hello").as_dict() == {"ok": True}


def test_contains_list_details_name_missing_values() -> None:
    result = run("contains", {"value": ["a", "zz"]}, "a")
    assert result.details == {"missing": ["zz"]}


def test_hyphenated_name_is_accepted() -> None:
    assert run("not-contains", {"fragments": ["x"]}, "y").ok
