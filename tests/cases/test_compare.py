"""`smevals score --compare BEFORE AFTER`: ai-eval-forge's comparison of two result files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_cli


def results(*cases: tuple[str, bool, float]) -> str:
    rows = [{"id": i, "passed": p, "score": s, "checks": [], "meta": {}} for i, p, s in cases]
    passed = sum(1 for _, p, _ in cases if p)
    return json.dumps({"summary": {"total": len(rows), "passed": passed}, "cases": rows})


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "before.json").write_text(results(
        ("a", True, 1.0), ("b", False, 0.3), ("c", True, 0.8), ("d", False, 0.4),
        ("e", True, 1.0), ("f", True, 1.0)))
    (tmp_path / "after.json").write_text(results(
        ("a", False, 0.5), ("b", True, 1.0), ("c", True, 0.90004), ("d", False, 0.2),
        ("e", True, 1.00001), ("g", True, 0.7)))
    return tmp_path


def test_compare_json_lists_every_change(work: Path) -> None:
    res = run_cli("score", "--compare", "before.json", "after.json", "--format", "json",
                  cwd=work)
    assert res.code == 1
    assert res.err == "Error: 1 regression(s), 1 removed case(s)\n"
    doc = json.loads(res.out)
    assert doc["baseline"] == {"label": "before.json", "total": 6, "passed": 4,
                               "passRate": 4 / 6}
    assert doc["current"] == {"label": "after.json", "total": 6, "passed": 4,
                              "passRate": 4 / 6}
    assert doc["passRateDelta"] == 0.0
    assert doc["counts"] == {"regression": 1, "improvement": 1, "score_up": 1, "score_down": 1,
                             "unchanged": 1, "added": 1, "removed": 1}
    assert [(r["id"], r["status"], r["delta"]) for r in doc["cases"]] == [
        ("a", "regression", -0.5), ("b", "improvement", 0.7), ("c", "score_up", 0.1),
        ("d", "score_down", -0.2), ("e", "unchanged", 0.0)]
    assert doc["cases"][0]["before"] == {"passed": True, "score": 1.0}
    assert doc["cases"][0]["after"] == {"passed": False, "score": 0.5}
    assert doc["added"] == [{"id": "g", "passed": True, "score": 0.7}]
    assert doc["removed"] == [{"id": "f", "passed": True, "score": 1.0}]


def test_compare_markdown_is_the_default(work: Path) -> None:
    res = run_cli("score", "--compare", "before.json", "after.json", "--baseline-label", "v1",
                  "--current-label", "v2", cwd=work)
    assert res.code == 1
    assert res.out == """\
# Comparison: v1 -> v2

- Pass rate: 67% (4/6) -> 67% (4/6) (+0 points)
- Regressions: 1, Improvements: 1, Score up: 1, Score down: 1, Unchanged: 1, Added: 1, Removed: 1

## Regressions

| Case | Before | After | Change |
| --- | --- | --- | ---: |
| a | pass 1 | fail 0.5 | -0.5 |

## Improvements

| Case | Before | After | Change |
| --- | --- | --- | ---: |
| b | fail 0.3 | pass 1 | +0.7 |

## Score changes

| Case | Before | After | Change |
| --- | --- | --- | ---: |
| c | pass 0.8 | pass 0.90004 | +0.1 |
| d | fail 0.4 | fail 0.2 | -0.2 |

## Added cases

- g (pass 0.7)

## Removed cases

- f (pass 1)
"""


def test_improvements_and_additions_alone_exit_0(work: Path) -> None:
    (work / "better.json").write_text(results(
        ("a", True, 1.0), ("b", True, 1.0), ("c", True, 0.8), ("d", False, 0.5),
        ("e", True, 1.0), ("f", True, 1.0), ("h", False, 0.0)))
    res = run_cli("score", "--compare", "before.json", "better.json", cwd=work)
    assert (res.code, res.err) == (0, "")
    assert "- Pass rate: 67% (4/6) -> 71% (5/7) (+4.76 points)\n" in res.out
    removed = run_cli("score", "--compare", "better.json", "before.json", "--format", "json",
                      cwd=work)
    assert removed.code == 1
    assert json.loads(removed.out)["counts"]["removed"] == 1


def test_case_files_are_scored_before_comparing(work: Path) -> None:
    (work / "old.jsonl").write_text('{"id": "q", "actual": "Paris", "expected": "Paris"}\n')
    (work / "new.jsonl").write_text('{"id": "q", "actual": "Lyon", "expected": "Paris"}\n')
    res = run_cli("score", "--compare", "old.jsonl", "new.jsonl", "--format", "json", cwd=work)
    assert res.code == 1
    assert [(r["id"], r["status"], r["delta"]) for r in json.loads(res.out)["cases"]] == [
        ("q", "regression", -1.0)]


@pytest.mark.parametrize(("text", "message"), [
    ('{"summary": {}, "cases": [{"id": "a", "score": 1}]}',
     "broken.json: cases[0]: `passed` must be true or false"),
    ('{"summary": {}, "cases": [{"id": "a", "passed": true, "score": "1"}]}',
     "broken.json: cases[0]: `score` must be a number"),
    ('{"summary": {}, "cases": [{"id": "a", "passed": true, "score": 1}, '
     '{"id": "a", "passed": true, "score": 1}]}',
     "broken.json: cases[1]: duplicate case id 'a'"),
    ('{"summary": {}, "cases": [{"passed": true, "score": 1}]}',
     "broken.json: cases[0]: a case result needs an `id`"),
])
def test_bad_result_files_exit_2(work: Path, text: str, message: str) -> None:
    (work / "broken.json").write_text(text)
    res = run_cli("score", "--compare", "before.json", "broken.json", cwd=work)
    assert (res.code, res.out, res.err) == (2, "", f"Error: {message}\n")


def test_compare_usage_errors(work: Path) -> None:
    res = run_cli("score", "--compare", "before.json", cwd=work)
    assert res.code == 2 and "--compare takes two files: BEFORE AFTER" in res.err
    res = run_cli("score", "--compare", "before.json", "nope.json", cwd=work)
    assert (res.code, res.err) == (2, "Error: nope.json: no such file\n")
