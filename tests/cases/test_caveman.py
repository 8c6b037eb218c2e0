"""@caveman/evals grader objects work as they are: with `smevals.check()` (its `type` key and
option names) and, with `checker:` instead of `type`, as Checks in a grader file.

What caveman reads from its candidate object (status, latency, cost, tokens, tool calls)
smevals reads from the Run's usage, so those rows give a usage record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

import smevals
from tests.helpers import run_cli

SEARCH = {"name": "search", "arguments": {"q": "paris"}}
ROWS: list[tuple[dict[str, Any], str, dict[str, Any] | None, bool]] = [
    ({"type": "exact_match", "expected": "ready"}, "READY", None, True),
    ({"type": "exact_match", "expected": "ready"}, "not ready", None, False),
    ({"type": "exact_match", "expected": "Ready", "case_sensitive": True}, "ready", None, False),
    ({"type": "exact_match", "expected": "ready", "remove_punctuation": True}, "ready!", None,
     True),
    ({"type": "exact_match", "expected": {"b": 2, "a": 1}}, '{"a": 1, "b": 2}', None, True),
    ({"type": "contains", "fragments": ["alpha", "beta"]}, "alpha and beta", None, True),
    ({"type": "contains", "fragments": ["alpha", "beta"]}, "alpha only", None, False),
    ({"type": "not_contains", "fragments": ["As an AI"]}, "Sure.", None, True),
    ({"type": "not_contains", "fragments": ["As an AI"]}, "As an AI, I cannot", None, False),
    ({"type": "regex", "pattern": "^\\d{3}-\\d{4}$"}, "555-1234", None, True),
    ({"type": "regex", "pattern": "^\\d{3}-\\d{4}$"}, "5551234", None, False),
    ({"type": "not_regex", "pattern": "(?i)todo"}, "done", None, True),
    ({"type": "not_regex", "pattern": "(?i)todo"}, "TODO: fix\n", None, False),
    ({"type": "blocklist", "terms": ["cat"]}, "concatenate", None, True),
    ({"type": "blocklist", "terms": ["cat"]}, "the Cat sat", None, False),
    ({"type": "json_schema", "schema": {"type": "object", "required": ["id"],
                                        "properties": {"id": {"type": "integer"}}}},
     '{"id": 3}', None, True),
    ({"type": "json_schema", "schema": {"type": "object", "required": ["id"],
                                        "properties": {"id": {"type": "integer"}}}},
     '{"id": "3"}', None, False),
    ({"type": "json_path_assertion", "path": "a.b", "equals": 1}, '{"a": {"b": 1}}', None, True),
    ({"type": "json_path_assertion", "path": "a.b", "equals": 1}, '{"a": {"b": 2}}', None, False),
    ({"type": "json_path_assertion", "path": "error", "exists": False}, '{"ok": true}', None,
     True),
    ({"type": "bleu_score", "reference": "the cat sat on the mat", "threshold": 0.9},
     "the cat sat on the mat", None, True),
    ({"type": "bleu_score", "reference": "the cat sat on the mat", "threshold": 0.5},
     "the cat", None, False),
    ({"type": "rouge_score", "reference": "the cat sat on the mat", "rouge_type": "rouge_l",
      "measure": "recall", "threshold": 0.5}, "the cat sat", None, True),
    ({"type": "rouge_score", "reference": "the cat sat on the mat"}, "dogs run", None, False),
    ({"type": "context_f1", "retrieved": ["Paris is the capital of France."],
      "expected": ["Paris is the capital of France"], "threshold": 0.5}, "", None, True),
    ({"type": "context_f1", "retrieved": ["Berlin is in Germany."],
      "expected": ["Paris is the capital of France"], "measure": "recall"}, "", None, False),
    ({"type": "localization_f1", "reference": "a.py:1-10"}, "a.py:1-10", None, True),
    ({"type": "localization_f1", "reference": "a.py:1-10"}, "a.py:5-14", None, False),
    ({"type": "no_pii"}, "Contact us through the form.", None, True),
    ({"type": "no_pii"}, "mail bob@example.com", None, False),
    ({"type": "no_pii", "entities": ["email"]}, "call +44 20 7946 0958", None, True),
    ({"type": "tool_called", "tools": ["search"]}, "", {"tool_calls": [SEARCH]}, True),
    ({"type": "tool_called", "tools": ["search"]}, "", {"tool_calls": []}, False),
    ({"type": "tool_not_called", "tools": ["delete"]}, "", {"tool_calls": [SEARCH]}, True),
    ({"type": "tool_not_called", "tools": ["delete"]}, "",
     {"tool_calls": [{"tool": "delete", "args": {}}]}, False),
    ({"type": "tool_sequence", "tools": ["search", "fetch"]}, "",
     {"tool_calls": [SEARCH, "log", {"name": "fetch"}]}, True),
    ({"type": "tool_sequence", "tools": ["search", "fetch"]}, "",
     {"tool_calls": [{"name": "fetch"}, SEARCH]}, False),
    ({"type": "tool_argument_assertion", "tool": "search", "path": "q", "equals": "paris"}, "",
     {"tool_calls": [{"function": {"name": "search", "arguments": "{\"q\": \"paris\"}"}}]},
     True),
    ({"type": "tool_argument_assertion", "tool": "search", "path": "q", "equals": "london"},
     "", {"tool_calls": [SEARCH]}, False),
    ({"type": "http_status", "status": 200}, "", {"http_status": 200}, True),
    ({"type": "http_status", "status": 200}, "", {"http_status": 503}, False),
    ({"type": "latency_threshold", "p95_ms": 500}, "", {"latency_ms": 300}, True),
    ({"type": "latency_threshold", "p95_ms": 500}, "", {"latency_ms": 800}, False),
    ({"type": "latency_threshold", "p95_ms": 500}, "", None, False),
    ({"type": "cost_threshold", "max_usd": 0.01}, "", {"cost_usd": 0.002}, True),
    ({"type": "cost_threshold", "max_usd": 0.01}, "", {"cost_usd": 0.02}, False),
    ({"type": "token_threshold", "max_tokens": 100}, "",
     {"input_tokens": 40, "output_tokens": 50}, True),
    ({"type": "token_threshold", "max_tokens": 100}, "", {"total_tokens": 150}, False),
]
DETERMINISTIC = sorted({row[0]["type"] for row in ROWS})
NETWORK = ["custom_webhook", "llm_answer_match", "llm_category", "llm_judge",
           "llm_pairwise", "llm_score"]
# Caveman's spelling of each, with a judge that cannot answer (nothing reaches a network).
NO_JUDGE = {"backend": "replay", "responses": "/nonexistent/answers.jsonl"}
NETWORK_SPECS: dict[str, dict[str, Any]] = {
    "custom_webhook": {"url": "http://169.254.169.254/"},
    "llm_answer_match": {"expected": "hi", "judge": NO_JUDGE},
    "llm_category": {"prompt": "Tone?", "categories": ["kind", "rude"],
                     "passing_categories": ["kind"], "judge": NO_JUDGE},
    "llm_judge": {"rubric": "Is it polite?", "judge": NO_JUDGE},
    "llm_pairwise": {"baseline": "hey", "criteria": "Politer?", "judge": NO_JUDGE},
    "llm_score": {"rubric": "Is it polite?", "min_score": 0.5, "judge": NO_JUDGE},
}


def test_the_table_covers_every_deterministic_caveman_type() -> None:
    assert len(DETERMINISTIC) == 21
    assert len(DETERMINISTIC) + len(NETWORK) == 27


@pytest.mark.parametrize(("spec", "output", "usage", "passed"), ROWS,
                         ids=[f"{r[0]['type']}-{i}" for i, r in enumerate(ROWS)])
def test_caveman_objects_with_smevals_check(spec: dict[str, Any], output: str,
                                            usage: dict[str, Any] | None, passed: bool) -> None:
    assert smevals.check(spec, output, usage=usage)["ok"] is passed


@pytest.mark.parametrize("kind", NETWORK)
def test_network_and_judge_graders_take_cavemans_options_and_fail_closed(kind: str) -> None:
    result = smevals.check({"type": kind, **NETWORK_SPECS[kind]}, "hello")
    assert result["ok"] is False
    if kind == "custom_webhook":
        assert "a link-local address" in result["notes"] and "error" not in result
    else:
        assert result["error"] is True
        assert result["notes"].startswith("judge error: cannot read the replay file")


def run_usage(usage: dict[str, Any] | None) -> dict[str, Any] | None:
    """Tool calls as a Run records them ({name, arguments}; usage.schema.json)."""
    if usage is None or "tool_calls" not in usage:
        return usage
    calls = []
    for call in usage["tool_calls"]:
        if isinstance(call, str):
            call = {"name": call}
        func = call.get("function", {})
        args = call.get("arguments", call.get("args", func.get("arguments", {})))
        calls.append({"name": call.get("name", call.get("tool", func.get("name"))),
                      "arguments": json.loads(args) if isinstance(args, str) else args})
    return {**usage, "tool_calls": calls}


def test_caveman_objects_as_checks_in_grader_files(tmp_path: Path) -> None:
    """One Eval per row: a replayed output and usage, and a grader with the caveman object
    as its Check (`checker:` instead of `type:`). One `run -g` grades them all."""
    for index, (spec, output, raw, _) in enumerate(ROWS):
        usage = run_usage(raw)
        ev = tmp_path / "suite" / f"row{index:02d}"
        for sub in ("tasks", "configs", "graders"):
            (ev / sub).mkdir(parents=True)
        (ev / "eval.yaml").write_text(f"name: row{index:02d}\n")
        (ev / "tasks" / "t.yaml").write_text("prompt: x\n")
        (ev / "configs" / "default.yaml").write_text(
            "runner: smevals:replay\nresponses: r.jsonl\nmodel: m\n")
        line: dict[str, Any] = {"task": "t", "model": "m", "output": output}
        if usage is not None:
            line["usage"] = usage
        (ev / "configs" / "r.jsonl").write_text(json.dumps(line) + "\n")
        check = {"checker": spec["type"], **{k: v for k, v in spec.items() if k != "type"}}
        (ev / "graders" / "default.yaml").write_text(yaml.safe_dump({"checks": [check]}))
    res = run_cli("validate", "suite", cwd=tmp_path)
    assert res.out == f"OK: {len(ROWS)} evals, {len(ROWS)} tasks, {len(ROWS)} configs, " \
                      f"{len(ROWS)} graders; no problems\n", res.both
    res = run_cli("run", "suite", "-g", cwd=tmp_path)
    assert res.code == 1 and res.out.endswith(f"\n{len(ROWS)} ok, 0 failed\n"), res.both
    for index, (spec, output, raw, passed) in enumerate(ROWS):
        usage = run_usage(raw)
        found = list((tmp_path / "suite" / f"row{index:02d}" / "results" / "grades")
                     .glob("*/*/*/*/*/grade.json"))
        assert len(found) == 1
        grade = json.loads(found[0].read_text())
        result = {k: v for k, v in grade["checks"][0].items()
                  if k not in ("checker", "seconds")}
        assert grade["outcome"] == ("pass" if passed else "fail"), spec
        assert result == smevals.check(spec, output, usage=usage), spec


@pytest.mark.parametrize("index", [0, 1, 15, 32, 41, 46])
def test_caveman_objects_with_smevals_check_command(index: int) -> None:
    spec, output, usage, passed = ROWS[index]
    args = ["check", json.dumps(spec), "--output", output]
    if usage is not None:
        args += ["--usage", json.dumps(usage)]
    res = run_cli(*args)
    assert res.code == (0 if passed else 1), res.both
    assert json.loads(res.out) == smevals.check(spec, output, usage=usage)


def test_smevals_check_exits_2_when_the_judge_gives_no_verdict() -> None:
    spec = {"type": "llm_judge", **NETWORK_SPECS["llm_judge"]}
    res = run_cli("check", json.dumps(spec), "--output", "hi")
    assert res.code == 2, res.both
    assert json.loads(res.out)["error"] is True
