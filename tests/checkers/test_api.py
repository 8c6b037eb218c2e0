"""smevals.check(): the store-free Python API."""

from __future__ import annotations

from typing import Any

import pytest

import smevals
from smevals.errors import SmevalsError


def test_checker_key() -> None:
    assert smevals.check({"checker": "contains", "value": "hel"}, "hello") == {"ok": True}


def test_type_key_as_in_other_tools() -> None:
    result = smevals.check({"type": "exact_match", "expected": "Paris"}, " paris ")
    assert result == {"ok": True, "score": 1.0}


def test_failure_is_a_result_not_an_exception() -> None:
    assert smevals.check({"checker": "contains", "value": "zzz"}, "hello") == {
        "ok": False,
        "notes": "output.txt does not contain 'zzz'",
    }


def test_task_and_grading_keys() -> None:
    task = {"expected": "wrong", "grading": {"expected": "42"}}
    assert smevals.check({"checker": "contains"}, "it is 42", task=task)["ok"] is True


def test_missing_task_key_fails_the_check() -> None:
    result = smevals.check({"checker": "contains", "value": {"task": "answer"}}, "x", task={})
    assert result == {
        "ok": False,
        "notes": "the Task has no key 'answer' (option 'value' reads it)",
    }


def test_usage() -> None:
    spec = {"type": "latency_threshold", "p95_ms": 500}
    assert smevals.check(spec, "", usage={"latency_ms": 120})["ok"] is True
    assert smevals.check(spec, "")["ok"] is False


@pytest.mark.parametrize(
    "spec,minimum,ok",
    [
        ({"checker": "token_f1", "value": "a b c d"}, 0.5, True),  # F1 0.67: min decides
        ({"checker": "token_f1", "value": "a b c d"}, 0.9, False),
        ({"checker": "contains", "value": "a"}, 0.5, False),  # no score to judge
    ],
)
def test_min_is_the_pass_mark(spec: dict[str, Any], minimum: float, ok: bool) -> None:
    assert smevals.check({**spec, "min": minimum}, "a b")["ok"] is ok


def test_name_and_timeout_reach_the_checker() -> None:
    spec = {"checker": "match_output", "expected_output": "", "timeout": 1, "name": "loop"}
    result = smevals.check(spec, "while True: pass")
    assert result["notes"] == "program timed out after 1 s"


BAD_SPECS = [
    ({"value": "x"}, "names no checker"),
    ({"checker": "nope"}, "unknown checker 'nope'; built-in checkers: bleu"),
    ({"checker": "contains", "type": "regex"}, "disagree"),
    ({"checker": 5}, "must be a non-empty string"),
    (
        {"checker": "contains", "value": "x", "bogus": 1},
        "invalid check 'contains': bogus: unknown option",
    ),
    ({"type": "regex", "pattern": r"(a)\1"}, "RE2 does not support backreferences"),
    ({"type": "json_schema", "schema": {"type": "wat"}}, "invalid JSON Schema"),
    ({"checker": "contains", "value": "x", "min": 2}, "`min` must be a number from 0 to 1"),
    ({"checker": "contains", "value": "x", "timeout": -1}, "`timeout` must be a positive"),
]


@pytest.mark.parametrize("spec,message", BAD_SPECS)
def test_bad_spec_raises(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(SmevalsError) as caught:
        smevals.check(spec, "x")
    assert message in str(caught.value)


def test_bad_arguments_raise() -> None:
    with pytest.raises(SmevalsError, match="output must be a string"):
        smevals.check({"checker": "contains", "value": "x"}, b"x")  # type: ignore[arg-type]
    with pytest.raises(SmevalsError, match="task must be a mapping"):
        smevals.check({"checker": "contains", "value": "x"}, "x", task=[])  # type: ignore[arg-type]
    with pytest.raises(SmevalsError, match="spec must be a mapping"):
        smevals.check("contains", "x")  # type: ignore[arg-type]
