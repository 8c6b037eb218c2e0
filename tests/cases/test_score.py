"""`smevals score`: ai-eval-forge's verdicts, scores, output shape and exit codes, with the
expected values computed by hand from ai-eval-forge's documented formulas."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.helpers.forge_expected import DATA, EXPECTED

# (id, passed, case score, [(type, passed, score, min, detail), ...]), worked out by hand:
# exact lowercases and collapses whitespace; a non-string value is compared as compact JSON;
# contains is case-insensitive unless caseSensitive, scored hits/n; regex defaults to flag i;
# token_f1 is multiset F1 over [a-z0-9]+ tokens, implicit min 0.65 else 1; json_field
# ignores empty path segments and takes negative indexes; citation_coverage = cited / ids;
# a case needs its required checks (all checks when none is required); its score is the
# mean of the rounded check scores, rounded to 4 places.
SCORE_SUM = 1 + 0 + 0.6667 + 0 + 0.5 + 1 + 0.6667 + 0.5714 + 1 + 0 + 1 + 0 + 0.6667 + 0.5 \
    + 0.5 + 1 + 1 + 1


@pytest.fixture
def work(tmp_path: Path) -> Path:
    shutil.copy(DATA / "every-type.jsonl", tmp_path / "cases.jsonl")
    return tmp_path


def test_every_check_type_scores_as_ai_eval_forge(work: Path) -> None:
    res = run_cli("score", "cases.jsonl", cwd=work)
    assert res.code == 1
    assert res.err == "Error: 6 of 18 case(s) failed\n"
    doc = json.loads(res.out)
    got = [(c["id"], c["passed"], c["score"],
            [(k["type"], k["passed"], k["score"], k["min"], k["detail"]) for k in c["checks"]])
           for c in doc["cases"]]
    assert got == EXPECTED
    assert doc["summary"] == {
        "total": 18, "passed": 12, "failed": 6, "passRate": 12 / 18,
        "averageScore": pytest.approx(SCORE_SUM / 18), "totalCostUsd": 0.0025,
        "averageLatencyMs": 18,          # (250 + 83) / 18 = 18.5, rounded half to even
    }
    assert [c["meta"] for c in doc["cases"]][-2:] == [
        {"input": "What is 2+2?", "tags": ["math"], "costUsd": 0.0015, "latencyMs": 250.0},
        {"input": None, "tags": [], "costUsd": 0.001, "latencyMs": 83.0},
    ]
    assert [k["required"] for k in doc["cases"][4]["checks"]] == [True, False]


def test_json_output_shape_is_exact(work: Path) -> None:
    (work / "one.json").write_text('[{"id": "greeting", "actual": "hello world", '
                                   '"expected": "hello world"}]')
    res = run_cli("score", "one.json", cwd=work)
    assert (res.code, res.err) == (0, "")
    assert res.out == """\
{
  "summary": {
    "total": 1,
    "passed": 1,
    "failed": 0,
    "passRate": 1.0,
    "averageScore": 1.0,
    "totalCostUsd": 0.0,
    "averageLatencyMs": 0
  },
  "cases": [
    {
      "id": "greeting",
      "passed": true,
      "score": 1.0,
      "checks": [
        {
          "type": "token_f1",
          "required": true,
          "passed": true,
          "score": 1.0,
          "min": 0.65,
          "detail": "token_f1=1.0"
        }
      ],
      "meta": {
        "input": null,
        "tags": [],
        "costUsd": 0.0,
        "latencyMs": 0.0
      }
    }
  ]
}
"""


def test_markdown_output(work: Path) -> None:
    res = run_cli("score", "cases.jsonl", "--format", "markdown", cwd=work)
    assert res.code == 1
    head, table = res.out.split("\n\n", 2)[1:]
    assert head == "- Total: 18\n- Passed: 12\n- Failed: 6\n- Pass rate: 67%\n" \
                   "- Average score: 0.6151"
    rows = table.splitlines()
    assert rows[:2] == ["| Case | Result | Score | Failed checks |", "| --- | --- | ---: | --- |"]
    assert rows[2] == "| exact-pass | pass | 1.0 | - |"
    assert rows[6] == "| regex-flags | pass | 0.5 | regex |"
    assert rows[16] == "| none-required | fail | 0.5 | exact |"
    assert len(rows) == 20


def test_an_empty_file_is_an_empty_passing_suite(work: Path) -> None:
    (work / "empty.jsonl").write_text("\n  \n")
    res = run_cli("score", "empty.jsonl", cwd=work)
    assert res.code == 0
    assert json.loads(res.out) == {"summary": {
        "total": 0, "passed": 0, "failed": 0, "passRate": 0, "averageScore": 0,
        "totalCostUsd": 0, "averageLatencyMs": 0}, "cases": []}


def test_smevals_fails_closed_where_ai_eval_forge_passes_open(work: Path) -> None:
    (work / "open.jsonl").write_text(
        '{"id": "no-ids", "actual": "x", "checks": [{"type": "citation_coverage"}]}\n'
        '{"id": "empty-list", "actual": "x", "checks": [{"type": "contains", "value": []}]}\n'
        '{"id": "no-tokens", "actual": "", "expected": ""}\n')
    res = run_cli("score", "open.jsonl", cwd=work)
    assert res.code == 1
    checks = [c["checks"][0] for c in json.loads(res.out)["cases"]]
    assert [(c["passed"], c["score"]) for c in checks] == [(False, 0.0)] * 3
    assert checks[0]["detail"].startswith("smevals refuses this check: sources: ")
    assert checks[2]["detail"] == ("smevals fails this check: the expected value has no tokens "
                                   "(letters or digits) to compare")


BAD = [
    ('{"id": "x", "actual": "a", "checks": [{"type": "semantic"}]}\n',
     "bad.jsonl:1: case 'x': checks[0]: unknown check type 'semantic' (ai-eval-forge knows: "
     "exact, contains, regex, token_f1, json_valid, json_field, citation_coverage)"),
    ('{"id": "x", "actual": "a"}\n{"id": "y", "actual": "a", "checks": [{"type": "regex", '
     '"pattern": "(unclosed"}]}\n',
     "bad.jsonl:2: case 'y': checks[0]: regex: pattern: invalid regex for RE2: missing ): "
     "(?i)(unclosed"),
    ('{"id": "x", "actual": "a"}\n{"id": "y", "actual": \n',
     "bad.jsonl:2: invalid JSON: Expecting value (line 1 column 23)"),
    ('{"id": "x", "checks": [{"type": "regex"}]}\n',
     "bad.jsonl:1: case 'x': checks[0]: regex needs a string `pattern` (or `value`)"),
    ('{"id": "x", "checks": [{"type": "json_field", "value": 1}]}\n',
     "bad.jsonl:1: case 'x': checks[0]: json_field needs a string `path`"),
    ('{"id": "x", "checks": [{"type": "exact", "min": "high"}]}\n',
     "bad.jsonl:1: case 'x': checks[0]: `min` must be a number, not 'high'"),
    ('[{"id": "x"}, 3]', "bad.jsonl[1]: a case must be a JSON object, not a number"),
    ('{"id": "x", "checks": {"type": "exact"}}\n',
     "bad.jsonl:1: `checks` must be a list, not an object"),
    ('{"id": "x", "costUsd": "cheap"}\n', "bad.jsonl:1: `costUsd` must be a number, not 'cheap'"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_input_exits_2_before_scoring(work: Path, text: str, message: str) -> None:
    (work / "bad.jsonl").write_text(text)
    res = run_cli("score", "bad.jsonl", cwd=work)
    assert (res.code, res.out, res.err) == (2, "", f"Error: {message}\n")


def test_unreadable_files_and_usage_errors_exit_2(work: Path) -> None:
    res = run_cli("score", "missing.jsonl", cwd=work)
    assert (res.code, res.err) == (2, "Error: missing.jsonl: no such file\n")
    (work / "latin1.jsonl").write_bytes(b'{"id": "caf\xe9"}\n')
    res = run_cli("score", "latin1.jsonl", cwd=work)
    assert (res.code, res.err) == (2, "Error: latin1.jsonl: not UTF-8 text (byte 11)\n")
    res = run_cli("score", "cases.jsonl", "cases.jsonl", cwd=work)
    assert res.code == 2 and "give one case file" in res.err


def test_a_value_shaped_like_a_task_reference_is_literal(work: Path) -> None:
    (work / "ref.jsonl").write_text(
        '{"id": "r", "actual": "{\\"a\\": {\\"task\\": \\"x\\"}}", "checks": [{"type": '
        '"json_field", "path": "a", "value": {"task": "x"}}]}\n')
    res = run_cli("score", "ref.jsonl", cwd=work)
    assert res.code == 0, res.both
    assert json.loads(res.out)["cases"][0]["checks"][0]["detail"] == 'a={"task": "x"}'
