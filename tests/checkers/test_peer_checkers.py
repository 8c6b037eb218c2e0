"""The checkers that keep another tool's meaning: equals (promptfoo's strict equals),
contains `any`/`casefold` (promptfoo's contains-any, Inspect's includes()), javascript and
python (promptfoo's code assertions, in the sandbox), inspect_match, inspect_exact and
inspect_choice (Inspect 0.3.285's scorers)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from smevals.checkers import CheckInput, run_check
from smevals.checkers.strict import js_number
from tests.checkers.helpers import Case, case, run, verify

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")

TABLE = [
    # equals: strict, as promptfoo's (never lowercased or trimmed)
    case("equals", "same", {"value": "Yarr"}, "Yarr"),
    case("equals", "case", {"value": "Yarr"}, "yarr", ok=False, notes="is not exactly 'Yarr'"),
    case("equals", "spaces", {"value": "Yarr"}, "Yarr  ", ok=False),
    case("equals", "newline", {"value": "Yarr"}, "Yarr\n", ok=False),
    case("equals", "number-as-js-text", {"value": 5}, "5"),
    case("equals", "float-as-js-text", {"value": 5.0}, "5"),
    case("equals", "not-5.0", {"value": 5.0}, "5.0", ok=False),
    case("equals", "bool", {"value": True}, "true"),
    case("equals", "json-keys-any-order", {"value": {"a": 1, "b": [1, 2]}},
         ' {"b": [1, 2.0], "a": 1}\n'),
    case("equals", "json-list-order", {"value": [1, 2]}, "[2, 1]", ok=False),
    case("equals", "json-types-strict", {"value": {"a": 1}}, '{"a": true}', ok=False),
    case("equals", "json-string-vs-number", {"value": {"a": 1}}, '{"a": "1"}', ok=False),
    case("equals", "json-extra-key", {"value": {"a": 1}}, '{"a": 1, "b": 2}', ok=False),
    case("equals", "json-not-json", {"value": {"a": 1}}, "{a: 1}", ok=False),
    case("equals", "json-nan", {"value": [1]}, "[NaN]", ok=False),
    case("equals", "null", {"value": None}, "null"),
    case("equals", "zero-signs", {"value": [0]}, "[-0]", ok=False),
    case("equals", "negate", {"value": "a", "negate": True}, "b"),
    case("equals", "negate-fails", {"value": "a", "negate": True}, "a", ok=False,
         notes="equals 'a'"),
    # contains any / casefold
    case("contains", "any-one", {"value": ["Tokyo", "Edo"], "any": True}, "It was Edo."),
    case("contains", "any-none", {"value": ["Tokyo", "Edo"], "any": True}, "Kyoto", ok=False,
         notes="contains none of 'Tokyo', 'Edo'"),
    case("contains", "any-case", {"value": ["TOKYO"], "any": True, "case_sensitive": False},
         "tokyo"),
    case("contains", "casefold", {"value": "STRASSE", "casefold": True}, "straße"),
    case("contains", "lower-is-not-casefold", {"value": "STRASSE", "case_sensitive": False},
         "straße", ok=False),
    # inspect_match: location, case, punctuation, numbers
    case("inspect_match", "end", {"target": "Paris"}, "The capital is paris."),
    case("inspect_match", "end-not-begin", {"target": "Paris"}, "Paris is it", ok=False),
    case("inspect_match", "begin", {"target": "Paris", "location": "begin"}, "Paris is it"),
    case("inspect_match", "any-list", {"target": ["Lyon", "Paris"], "location": "any"},
         "I think Paris is"),
    case("inspect_match", "exact", {"target": "Paris", "location": "exact"}, " paris! "),
    case("inspect_match", "case-kept", {"target": "Paris", "ignore_case": False}, "paris",
         ok=False),
    case("inspect_match", "numeric-end", {"target": "25", "numeric": True}, "It is 2 or 25"),
    case("inspect_match", "numeric-not-suffix", {"target": "5", "numeric": True}, "It is 25",
         ok=False),
    case("inspect_match", "text-suffix", {"target": "5"}, "It is 25"),
    case("inspect_match", "numeric-money", {"target": "1000", "numeric": True},
         "Total: $1,000.00"),
    case("inspect_match", "numeric-begin", {"target": "3", "numeric": True,
                                            "location": "begin"}, "3 apples, 4 pears"),
    case("inspect_match", "numeric-any", {"target": "4", "numeric": True, "location": "any"},
         "3 apples, 4 pears"),
    case("inspect_match", "numeric-exact-parens", {"target": "42", "numeric": True,
                                                   "location": "exact"}, "(42)", ok=False),
    case("inspect_match", "numeric-trimmed-word", {"target": "42", "numeric": True}, "(42)"),
    case("inspect_match", "numeric-half", {"target": "0.5", "numeric": True}, "It is ½"),
    case("inspect_match", "target-from-task", {}, "Lima", task={"expected": "lima"}),
    # inspect_exact: SQuAD-style normalising
    case("inspect_exact", "articles-punctuation", {"target": "The Eiffel Tower"},
         "eiffel tower."),
    case("inspect_exact", "numbers", {"target": "3"}, "3.0"),
    case("inspect_exact", "one-of", {"target": ["x", "Blue whale"]}, "a blue-whale"),
    case("inspect_exact", "differs", {"target": "blue whale"}, "a blue whale indeed", ok=False),
    case("inspect_exact", "empty-target", {"target": "the"}, "", ok=False),
    # inspect_choice: the answer letter, never a substring
    case("inspect_choice", "letter", {"target": "B", "choices": ["x", "y", "z"]}, "ANSWER: B"),
    case("inspect_choice", "bold", {"target": "B", "choices": 3}, "Thinking...\nANSWER: **b**"),
    case("inspect_choice", "parens", {"target": "B", "choices": 3}, "ANSWER: (B)."),
    case("inspect_choice", "bold-and-parens-unread", {"target": "B", "choices": 3},
         "ANSWER: **(b)**", ok=False),
    case("inspect_choice", "substring-is-not-an-answer", {"target": "B", "choices": 3},
         "Mars, obviously. But B", ok=False, notes="no `ANSWER: X` line"),
    case("inspect_choice", "wrong-letter", {"target": "B", "choices": 3}, "ANSWER: C",
         ok=False, notes="answer C; the target is B"),
    case("inspect_choice", "beyond-choices", {"target": "B", "choices": 3}, "ANSWER: D",
         ok=False),
    case("inspect_choice", "two-in-single", {"target": "B", "choices": 3}, "ANSWER: A, B",
         ok=False),
    case("inspect_choice", "multiple", {"target": ["A", "C"], "choices": 3,
                                        "multiple_correct": True}, "ANSWER: C and A"),
    case("inspect_choice", "multiple-letters", {"target": "AC", "choices": 3,
                                                "multiple_correct": True}, "ANSWER: AC"),
    case("inspect_choice", "last-line-wins", {"target": "A", "choices": 2},
         "ANSWER: B\nwait\nANSWER: A"),
    case("inspect_choice", "target-beyond", {"target": "E", "choices": 3}, "ANSWER: E",
         ok=False, notes="beyond the 3 choices: E"),
    case("inspect_choice", "from-task", {}, "ANSWER: a.", task={"expected": "A",
                                                                "choices": ["p", "q"]}),
]


@pytest.mark.parametrize("name,c", TABLE)
def test_table(name: str, c: Case) -> None:
    verify(name, c)


@pytest.mark.parametrize("number", [5.0, 0.1 + 0.2, 1e21, 1e-7, 1.5e-7, 0.000001, 123.456,
                                    1e16, 2.0 ** 60, -3.25, 5e-324])
def test_numbers_are_written_as_javascript_writes_them(number: float) -> None:
    expected = {5.0: "5", 0.1 + 0.2: "0.30000000000000004", 1e21: "1e+21", 1e-7: "1e-7",
                1.5e-7: "1.5e-7", 0.000001: "0.000001", 123.456: "123.456",
                1e16: "10000000000000000", 2.0 ** 60: "1152921504606847000",
                -3.25: "-3.25", 5e-324: "5e-324"}
    assert js_number(number) == expected[number]


SCRIPTS = [
    # (language, options, output, ok, score, notes)
    ("python", {"code": "len(output) < 5"}, "abc", True, 1.0, ""),
    ("python", {"code": "len(output) < 5", "negate": True}, "abc", False, 0.0, "negated"),
    ("python", {"code": "x = context['vars']['x']\nreturn {'pass_': x in output, 'score': 0.25, "
                        "'reason': 'seen'}", "test": {"vars": {"x": "b"}}}, "abc", True, 0.25,
     ""),
    ("python", {"code": "'0.3abc'", "threshold": 0.5}, "", False, 0.3, "threshold 0.5"),
    ("python", {"code": "'0.7'", "threshold": 0.5}, "", True, 0.7, ""),
    ("python", {"code": "'TRUE'"}, "", True, 1.0, ""),
    ("python", {"code": "{'pass': True, 'score': 0.2, 'reason': 'r'}", "threshold": 0.5}, "",
     False, 0.2, "less than threshold 0.5"),
    ("python", {"code": "None"}, "", False, 0.0, "Python code execution failed"),
    ("python", {"code": "float('inf')"}, "", False, 0.0, "Python code execution failed"),
    ("python", {"code": "1 / 0", "negate": True}, "", False, 0.0, "ZeroDivisionError"),
    ("python", {"code": "3"}, "", True, 1.0, ""),
    ("python", {"code": "context['prompt'] + '|' + str(context['vars'])"}, "", False, 0.0,
     "Python code execution failed"),
    ("javascript", {"code": "output.length < 5"}, "abc", True, 1.0, ""),
    ("javascript", {"code": "const n = output.length; n > 10"}, "abc", False, 0.0,
     "returned false"),
    ("javascript", {"code": "const s = 'a;b'; output === s"}, "a;b", True, 1.0, ""),
    ("javascript", {"code": "if (output.includes(context.vars.x)) {\n  return {pass: true, "
                            "score: 0.5, reason: 'has it'};\n}\nreturn 0;\n",
                    "test": {"vars": {"x": "b"}}}, "abc", True, 0.5, ""),
    ("javascript", {"code": "output.length", "threshold": 4}, "abc", False, 1.0, "threshold 4"),
    ("javascript", {"code": "-1"}, "", False, 0.0, "returned -1"),
    ("javascript", {"code": "'yes'"}, "", False, 0.0, "must return a boolean, number"),
    ("javascript", {"code": "JSON.parse(output).ok"}, "nope", False, 0.0, "threw an error"),
    ("javascript", {"code": "context.prompt === 'Say x' && context.config.k === 1",
                    "config": {"k": 1}}, "", True, 1.0, ""),
]


@pytest.mark.parametrize("language,opts,output,ok,score,notes", [
    pytest.param(*row, marks=needs_node if row[0] == "javascript" else ()) for row in SCRIPTS])
def test_script_assertions_read_as_promptfoo_reads_them(
        language: str, opts: dict[str, Any], output: str, ok: bool, score: float,
        notes: str) -> None:
    result = run(language, opts, output, task={"name": "t", "prompt": "Say x"})
    assert (result.ok, result.score) == (ok, score), result.as_dict()
    assert notes in result.notes, result.as_dict()
    assert result.details["sandbox"], result.as_dict()


@needs_node
def test_script_files_beside_the_grader(tmp_path: Path) -> None:
    (tmp_path / "a.js").write_text("module.exports = (output, context) => ({pass: output === "
                                   "context.vars.w, score: 1, reason: 'same'});\n"
                                   "module.exports.short = (output) => output.length < 3;\n")
    (tmp_path / "b.py").write_text("def get_assert(output, context):\n    return output == "
                                   "context['vars']['w']\n\nclass C:\n    @staticmethod\n"
                                   "    def long(output, context):\n        return 0.0\n")
    def check(name: str, opts: dict[str, Any]) -> tuple[bool, str]:
        inp = CheckInput(output="ok", task={"name": "t"}, usage=None, grader_dir=tmp_path)
        result = run_check(name, {**opts, "test": {"vars": {"w": "ok"}}}, inp)
        return result.ok, result.notes

    assert check("javascript", {"script": "a.js"}) == (True, "")
    assert check("javascript", {"script": "a.js", "function": "short"}) == (True, "")
    assert check("python", {"script": "b.py"}) == (True, "")
    assert check("python", {"script": "b.py", "function": "C.long"}) == (
        False, "the assertion returned 0")
    assert check("python", {"script": "../b.py"})[1] == \
        "script: '../b.py' leads outside the grader's folder"
    assert check("python", {"script": "missing.py"})[1] == \
        "script: no such file: missing.py (beside the grader)"
    assert check("python", {"script": "b.py", "code": "1"})[1] == \
        "option 'script': give only one of 'code', 'script'"


def test_javascript_without_node_is_an_error_never_a_pass(monkeypatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    result = run("javascript", {"code": "true"}, "x")
    assert result.as_dict() == {
        "ok": False, "error": True,
        "notes": "node is not on PATH: a javascript Check needs Node.js to run (install it, "
                 "e.g. apt-get install nodejs)"}


def test_a_script_cannot_reach_the_network_or_the_graders_environment(monkeypatch) -> None:
    monkeypatch.setenv("SMEVALS_TEST_SECRET_TOKEN", "s3cret")
    code = ("import os, socket\nleak = os.environ.get('SMEVALS_TEST_SECRET_TOKEN')\n"
            "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=2)\n    net = True\n"
            "except OSError:\n    net = False\nreturn not leak and not net")
    result = run("python", {"code": code}, "")
    assert result.ok, result.as_dict()
