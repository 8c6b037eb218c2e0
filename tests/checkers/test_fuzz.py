"""No checker raises: arbitrary output, options, Task, usage and binary files always give a
CheckResult whose dict is plain JSON."""

from __future__ import annotations

import atexit
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smevals.checkers import CheckInput, CheckResult, checker_names, get_checker, option_problems
from smevals.checkers import run_check as run_check_

SAFE_COMMAND = [sys.executable, "-I", "-S", "-c", "print(42)"]
# A database for the SQL checkers, built from this script (an absolute path: no grader here).
SQL_SCRIPT = Path(tempfile.mkdtemp(prefix="smevals-fuzz-")) / "fuzz.sql"
atexit.register(shutil.rmtree, SQL_SCRIPT.parent, ignore_errors=True)
SQL_SCRIPT.write_text("CREATE TABLE t (a INTEGER, b TEXT);\nINSERT INTO t VALUES (1, 'x');\n")
NO_JUDGE = {"backend": "replay", "responses": "/nonexistent/answers.jsonl"}

# One valid option set per checker, so fuzzed outputs reach the checkers' own code.
VALID: dict[str, dict[str, Any]] = {
    "contains": {"value": ["a", "b"]},
    "exact": {"value": "a b"},
    "exact_match": {"expected": {"a": 1}},
    "not_contains": {"fragments": ["x"]},
    "blocklist": {"terms": ["bad"]},
    "levenshtein": {"value": "the cat", "max_distance": 3},
    "regex": {"pattern": r"\d+", "flags": "im"},
    "not_regex": {"pattern": "^a"},
    "json_valid": {"extract": "json"},
    "json_field": {"path": "a.-1", "value": 1, "extract": "json"},
    "json_schema": {"schema": {"type": "object", "patternProperties": {"^a": {"type": "string"}}}},
    "json_path_assertion": {"path": "a.0", "equals": [1]},
    "token_f1": {"value": "the cat"},
    "bleu": {"reference": "the cat sat"},
    "rouge": {"reference": "the cat sat", "rouge_type": "rouge_l"},
    "citation_coverage": {"sources": ["s1", {"id": 2}]},
    "context_f1": {"expected": ["the cat", "a dog"]},
    "localization_f1": {"reference": "a.py:1-10\nb.py"},
    "no_pii": {},
    "tool_called": {"tools": ["search"]},
    "tool_not_called": {"tools": ["search"]},
    "tool_sequence": {"tools": ["a", "b"]},
    "tool_argument_assertion": {"tool": "search", "path": "q", "equals": "x"},
    "http_status": {"status": 200},
    "latency_threshold": {"max_ms": 100},
    "cost_threshold": {"max_usd": 1},
    "token_threshold": {"max_tokens": 100},
    "xml_valid": {},
    "render_svg": {"width": 64},
    "match_output": {"expected_output": "42", "command": SAFE_COMMAND},
    "command": {"command": "true"},     # no Run's workspace here: fails before running
    "sql_execution": {"database": str(SQL_SCRIPT), "reference": "SELECT a, b FROM t"},
    "sql_valid": {"database": str(SQL_SCRIPT)},
    # Judges and webhooks never reach the network here: a replay file that is not there,
    # an address that is refused before connecting.
    "llm_judge": {"rubric": "r", "judge": NO_JUDGE},
    "llm_score": {"rubric": "r", "threshold": 0.5, "judge": NO_JUDGE},
    "llm_category": {"categories": ["a", "b"], "passing": ["a"], "judge": NO_JUDGE},
    "llm_answer_match": {"expected": "x", "judge": NO_JUDGE},
    "llm_pairwise": {"reference": "ref", "judge": NO_JUDGE},
    "custom_webhook": {"url": "http://10.0.0.1/hook"},
    "equals": {"value": {"a": [1, "b"]}},
    "inspect_match": {"target": ["1", "x"], "numeric": True},
    "inspect_exact": {"target": "the cat"},
    "inspect_choice": {"target": "B", "choices": 4},
    "javascript": {"code": "output.length > 1"},
    "python": {"code": "len(output) > 1"},
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=6) | st.integers(), inner, max_size=3)
    ),
    max_leaves=8,
)
task_refs = st.builds(lambda k: {"task": k}, st.sampled_from(["expected", "nope", ""]))
tasks = st.dictionaries(
    st.sampled_from(
        ["expected", "sources", "context", "reference", "schema", "expected_output", "grading"]
    ),
    json_values,
    max_size=3,
)
calls = st.lists(
    st.one_of(
        st.text(max_size=8),
        st.fixed_dictionaries(
            {"name": st.sampled_from(["search", "a", "b"]), "arguments": json_values}
        ),
    ),
    max_size=4,
)
usages = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "tool_calls": calls | json_values,
        "latency_ms": json_values,
        "cost_usd": json_values,
        "total_tokens": json_values,
        "input_tokens": json_values,
        "http_status": json_values,
    },
)


def _options(name: str) -> st.SearchStrategy[dict[str, Any]]:
    keys = [*get_checker(name).all_properties(), *get_checker(name).aliases, "junk"]
    values = json_values | task_refs
    return st.dictionaries(st.sampled_from(keys), values, max_size=4)


def _run(name: str, options: Any, inp: CheckInput) -> CheckResult:
    if name == "match_output" and isinstance(options, dict):
        options = {**options, "command": SAFE_COMMAND}  # never execute fuzzed text
    if name == "command" and isinstance(options, dict):
        options = {**options, "command": "true"}
    if name in ("javascript", "python") and isinstance(options, dict):
        options = {k: v for k, v in options.items() if k not in ("script", "sandbox")}
        options["code"] = "output.length > 1" if name == "javascript" else "len(output) > 1"
    result = run_check_(name, options, inp)
    assert isinstance(result, CheckResult)
    json.dumps(result.as_dict(), allow_nan=False)
    assert result.ok or result.notes
    return result


def _examples(name: str, n: int) -> int:
    """Examples per checker and run: generating them is most of this file's time (about
    2,000 examples a run over all checkers and shapes; a failing one is kept in Hypothesis's
    database and tried first the next time)."""
    if name in ("javascript", "python"):     # each example starts a process: a few suffice
        return 4
    return 6 if name == "match_output" else n


@pytest.mark.parametrize("name", checker_names())
def test_arbitrary_options(name: str) -> None:
    @settings(max_examples=_examples(name, 20))
    @given(options=_options(name), output=st.text(max_size=200), task=tasks, usage=usages)
    def prop(options: dict[str, Any], output: str, task: dict[str, Any], usage: Any) -> None:
        option_problems(name, options)
        _run(name, options, CheckInput(output=output, task=task, usage=usage))

    prop()


@pytest.mark.parametrize("name", checker_names())
def test_arbitrary_output(name: str) -> None:
    @settings(max_examples=_examples(name, 20))
    @given(output=st.text(max_size=400), task=tasks, usage=usages)
    def prop(output: str, task: dict[str, Any], usage: Any) -> None:
        _run(name, VALID[name], CheckInput(output=output, task=task, usage=usage))

    prop()


FILE_CHECKERS = [n for n in checker_names() if get_checker(n).reads in ("text", "json")]


@pytest.mark.parametrize("name", FILE_CHECKERS)
def test_binary_files(name: str) -> None:
    @settings(
        max_examples=_examples(name, 8),
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(data=st.binary(max_size=300))
    def prop(data: bytes) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "f.bin").write_bytes(data)
            inp = CheckInput(output="", task={}, usage=None, workspace=Path(tmp))
            _run(name, {**VALID[name], "file": "f.bin"}, inp)

    prop()


@settings(max_examples=30)
@given(name=st.text(max_size=12), options=json_values)
def test_arbitrary_names_and_option_shapes(name: str, options: Any) -> None:
    option_problems(name, options)
    _run(name, options, CheckInput(output="x", task={}, usage=None))
