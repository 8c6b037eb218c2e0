"""Checkers over the Run record's usage: tool calls, HTTP status and ceilings."""

from __future__ import annotations

import math

import pytest

from tests.helpers.checkers import Case, case, verify

CALLS = {
    "tool_calls": [
        {"name": "search", "arguments": {"q": "cats", "n": 3}},
        {"function": {"name": "fetch", "arguments": '{"url": "https://x", "opts": {"a": 1}}'}},
        "summarise",
        {"tool": "search", "args": {"q": "dogs"}},
        {"arguments": {}},
    ]
}
NO_CALLS: dict[str, list[object]] = {"tool_calls": []}
USAGE = {
    "input_tokens": 900,
    "output_tokens": 300,
    "cost_usd": 0.004,
    "latency_ms": 812.5,
    "http_status": 200,
}

TABLE = [
    case("tool_called", "all", {"tools": ["search", "fetch"]}, usage=CALLS, score=1.0),
    case(
        "tool_called",
        "missing",
        {"tools": ["search", "delete"]},
        usage=CALLS,
        ok=False,
        score=0.0,
        notes="not called: 'delete'",
    ),
    case("tool_called", "none-recorded", {"tools": ["search"]}, usage=NO_CALLS, ok=False),
    case("tool_called", "no-usage", {"tools": ["search"]}, ok=False, score=None, notes="no usage"),
    case(
        "tool_called",
        "no-tool-calls-key",
        {"tools": ["x"]},
        usage={"cost_usd": 1},
        ok=False,
        notes="no tool_calls",
    ),
    case("tool_called", "empty-list", {"tools": []}, usage=CALLS, ok=False),
    case("tool_not_called", "clean", {"tools": ["delete"]}, usage=CALLS, score=1.0),
    case(
        "tool_not_called",
        "called",
        {"tools": ["delete", "fetch"]},
        usage=CALLS,
        ok=False,
        notes="called: 'fetch'",
    ),
    case("tool_not_called", "empty-record-passes", {"tools": ["delete"]}, usage=NO_CALLS),
    case("tool_not_called", "missing-record-fails", {"tools": ["delete"]}, usage={}, ok=False),
    case("tool_not_called", "empty-list", {"tools": []}, usage=CALLS, ok=False),
    case("tool_sequence", "subsequence", {"tools": ["search", "summarise"]}, usage=CALLS),
    case("tool_sequence", "repeats", {"tools": ["search", "search"]}, usage=CALLS),
    case(
        "tool_sequence",
        "too-many-repeats",
        {"tools": ["search", "search", "search"]},
        usage=CALLS,
        ok=False,
    ),
    case(
        "tool_sequence",
        "order",
        {"tools": ["fetch", "search", "fetch"]},
        usage=CALLS,
        ok=False,
        notes="in order",
    ),
    case(
        "tool_sequence",
        "exact",
        {"tools": ["search", "fetch", "summarise", "search"], "exact": True},
        usage=CALLS,
        score=1.0,
    ),
    case(
        "tool_sequence",
        "exact-fails-on-subsequence",
        {"tools": ["search", "fetch"], "exact": True},
        usage=CALLS,
        ok=False,
    ),
    case("tool_sequence", "empty-list", {"tools": []}, usage=CALLS, ok=False),
    case(
        "tool_argument_assertion",
        "flat",
        {"tool": "search", "path": "q", "equals": "dogs"},
        usage=CALLS,
        score=1.0,
    ),
    case(
        "tool_argument_assertion",
        "openai-string-arguments",
        {"tool": "fetch", "path": "opts", "equals": {"a": 1.0}},
        usage=CALLS,
    ),
    case(
        "tool_argument_assertion",
        "no-match",
        {"tool": "search", "path": "q", "equals": "birds"},
        usage=CALLS,
        ok=False,
        notes="no call to 'search'",
    ),
    case(
        "tool_argument_assertion",
        "not-called",
        {"tool": "delete", "path": "q", "equals": 1},
        usage=CALLS,
        ok=False,
        notes="'delete' was not called",
    ),
    case(
        "tool_argument_assertion",
        "missing-equals",
        {"tool": "search", "path": "q"},
        usage=CALLS,
        ok=False,
        notes="option 'equals'",
    ),
    case(
        "tool_argument_assertion",
        "type-strict",
        {"tool": "search", "path": "n", "equals": "3"},
        usage=CALLS,
        ok=False,
    ),
    case("http_status", "equal", {"status": 200}, usage=USAGE, score=1.0),
    case("http_status", "list", {"status": [201, 200]}, usage=USAGE),
    case("http_status", "different", {"status": 201}, usage=USAGE, ok=False, score=0.0),
    case("http_status", "absent", {"status": 200}, usage={}, ok=False, score=None),
    case("http_status", "string-status", {"status": 200}, usage={"http_status": "200"}, ok=False),
    case(
        "http_status",
        "bad-option",
        {"status": "200"},
        usage=USAGE,
        ok=False,
        notes="option 'status'",
    ),
    case("latency_threshold", "under", {"max_ms": 1000}, usage=USAGE, score=1.0),
    case("latency_threshold", "caveman-name", {"p95_ms": 1000}, usage=USAGE),
    case(
        "latency_threshold",
        "over",
        {"max_ms": 500},
        usage=USAGE,
        ok=False,
        score=0.0,
        notes="latency_ms 812.5 exceeds the ceiling 500",
    ),
    case("latency_threshold", "absent", {"max_ms": 500}, usage={}, ok=False, notes="no latency_ms"),
    case("latency_threshold", "negative", {"max_ms": 500}, usage={"latency_ms": -1}, ok=False),
    case(
        "latency_threshold", "non-finite", {"max_ms": 500}, usage={"latency_ms": math.inf}, ok=False
    ),
    case(
        "latency_threshold",
        "infinite-ceiling",
        {"max_ms": math.inf},
        usage=USAGE,
        ok=False,
        notes="finite",
    ),
    case("latency_threshold", "negative-ceiling", {"max_ms": -1}, usage=USAGE, ok=False),
    case("cost_threshold", "under", {"max_usd": 0.01}, usage=USAGE, score=1.0),
    case("cost_threshold", "over", {"max_usd": 0.001}, usage=USAGE, ok=False),
    case(
        "cost_threshold",
        "absent-cost-never-passes",
        {"max_usd": 10},
        usage={"latency_ms": 1},
        ok=False,
        score=None,
        notes="no cost_usd",
    ),
    case("cost_threshold", "null-cost", {"max_usd": 10}, usage={"cost_usd": None}, ok=False),
    case("cost_threshold", "bool-cost", {"max_usd": 10}, usage={"cost_usd": False}, ok=False),
    case("cost_threshold", "string-ceiling", {"max_usd": "1"}, usage=USAGE, ok=False),
    case("cost_threshold", "no-usage", {"max_usd": 1}, ok=False),
    case("token_threshold", "total-from-parts", {"max_tokens": 1200}, usage=USAGE, score=1.0),
    case("token_threshold", "over", {"max_tokens": 1199}, usage=USAGE, ok=False),
    case(
        "token_threshold",
        "output-only",
        {"max_tokens": 300, "measure": "output_tokens"},
        usage=USAGE,
    ),
    case(
        "token_threshold",
        "recorded-total-wins",
        {"max_tokens": 10},
        usage={**USAGE, "total_tokens": 5},
    ),
    case("token_threshold", "absent", {"max_tokens": 10}, usage={"input_tokens": 1}, ok=False),
    case(
        "token_threshold", "missing-ceiling", {}, usage=USAGE, ok=False, notes="option 'max_tokens'"
    ),
]


@pytest.mark.parametrize("name,c", TABLE)
def test_table(name: str, c: Case) -> None:
    result = verify(name, c)
    if name.endswith("_threshold") and result.score is not None:
        assert result.metrics


def test_ceiling_records_the_measurement() -> None:
    result = verify("latency_threshold", Case({"max_ms": 1000}, usage=USAGE))
    assert result.metrics == {"latency_ms": 812.5}
