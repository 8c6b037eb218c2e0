"""Per-Check results: `report` (Markdown, JSON, CSV) gives each Check's pass rate, mean score,
errors and skips per config x model; `diff` says which Check made a task flip and why; a
Suite's `report` and `diff` start with one summary table. The Eval has four Checks: one
that always passes, one that scores, one skipped via `if_task_has` for the Task without
the key, and a replayed judge that has no answer (an error) for two of poor's Runs."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from smevals.report.checks import check_rows, merged
from tests.helpers import git, run_cli, write

TASKS = "".join(json.dumps(task) + "\n" for task in [
    {"name": "capital", "prompt": "Capital of France?",
     "grading": {"expected": "Paris is the capital", "word": "Paris"}},
    {"name": "colour", "prompt": "Colour of the sky?", "grading": {"expected": "the sky is blue"}},
    {"name": "sum", "prompt": "2 + 2?", "grading": {"expected": "the answer is 4", "word": "4"}}])
RESPONSES = """\
{"task": "capital", "model": "good", "output": "Paris is the capital"}
{"task": "colour", "model": "good", "output": "the sky is blue"}
{"task": "sum", "model": "good", "output": "the answer is 4"}
{"task": "capital", "model": "poor", "output": "Lyon is the capital"}
{"task": "colour", "model": "poor", "output": "the sky is green"}
{"task": "sum", "model": "poor", "output": "the answer is 4"}
"""
GRADER = """\
judge:
  backend: replay
  responses: answers.jsonl
checks:
  - checker: contains
    name: says
    value: the
  - checker: token_f1
    name: overlap
    threshold: 0.6
  - checker: contains
    name: word
    value: {task: word}
    if_task_has: word
  - checker: llm_judge
    name: tone
    rubric: Is it polite?
"""
ANSWERS = """\
{"model": "good", "verdict": {"reason": "polite", "pass": true}}
{"model": "poor", "task": "capital", "verdict": {"reason": "rude", "pass": false}}
"""


def make_checks_eval(root: Path) -> Path:
    write(root / "eval.yaml", "description: per-Check figures\n")
    write(root / "tasks/t.jsonl", TASKS)
    write(root / "configs/default.yaml", "runner: smevals:replay\nresponses: r.jsonl\n"
                                         "model: good\n")
    write(root / "configs/r.jsonl", RESPONSES)
    write(root / "graders/default.yaml", GRADER)
    write(root / "graders/answers.jsonl", ANSWERS)
    return root


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Suite of two Evals in git: `ev` (above) and `small` (one Check), graded and
    committed; then, in the working tree only, ev's answer key for `capital` changed from
    Paris to Lyon and graded again (good's `capital` now fails its `word` Check)."""
    root = tmp_path_factory.mktemp("checks") / "suite"
    ev = make_checks_eval(root / "ev")
    small = root / "small"
    write(small / "eval.yaml", "description: one Check\n")
    write(small / "tasks/t.jsonl", '{"name": "hi", "prompt": "hi", '
                                   '"grading": {"expected": "hello"}}\n')
    write(small / "configs/default.yaml", "runner: smevals:replay\nresponses: r.jsonl\n"
                                          "model: good\n")
    write(small / "configs/r.jsonl", '{"task": "hi", "model": "good", "output": "hello"}\n')
    write(small / "graders/default.yaml", "checks:\n  - checker: contains\n"
                                          "    value: {task: expected}\n")
    ran = run_cli("run", str(ev), "-m", "good", "-m", "poor", "-g")
    assert ran.code == 2, ran.both           # two Grades without a verdict (an error)
    assert "1 run(s) graded as fail, 2 Grade(s) have no verdict" in ran.err
    assert run_cli("run", str(small), "-g").code == 0
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "graded")
    (ev / "tasks/t.jsonl").write_text(TASKS.replace('"word": "Paris"', '"word": "Lyon"'))
    regraded = run_cli("grade", str(ev))
    assert "Against each Run's previous Grade: 1 pass->fail, 0 fail->pass" in regraded.out
    assert regraded.code == 2, regraded.both
    return root


def report(repo: Path, *args: str) -> str:
    res = run_cli("report", *args, cwd=repo, env={"SOURCE_DATE_EPOCH": "1767322800"})
    assert (res.code, res.err) == (0, ""), res.both
    return res.out


CHECKS_TABLE = """\
## Checks

Over the Grades counted and the 2 errored one(s) left out above (an error is a Check \
without a verdict).

| Check | good (default) | poor (default) |
|---|---|---|
| says | 100% (3/3) | 100% (3/3) |
| overlap | 100% (3/3) | 100% (3/3), mean 0.83 ±0.08 |
| word | 100% (2/2), 1 skipped | 50% (1/2), 1 skipped |
| tone | 100% (3/3) | 0% (0/1), 2 errors |
"""
POOR_BLOCK = """\
## poor (default)

- score: - over 0 scored (of 1 run, 1 fail)
- pass rate: 0% (0/1), 95% CI [0.00, 0.79]
- token_f1: 0.75
- check says: pass 100% (3/3), 95% CI [0.44, 1.00]
- check overlap: pass 100% (3/3), 95% CI [0.44, 1.00], mean 0.83 ±0.08
- check word: pass 50% (1/2), 95% CI [0.09, 0.91], 1 skipped
- check tone: pass 0% (0/1), 95% CI [0.00, 0.79], 2 errors
"""


def test_markdown_lists_each_checks_pass_rate_mean_errors_and_skips(repo: Path) -> None:
    # a mean score is shown where it says more than the pass rate (not 1 on every pass and
    # 0 on every failure): overlap's 0.83 for poor
    out = report(repo, "ev", "--rev", "HEAD")
    assert "\n## Leaderboard\n" in out
    assert "\n\n" + CHECKS_TABLE + "\n## good (default)\n" in out
    assert out.endswith("\n" + POOR_BLOCK)
    assert ("- check word: pass 100% (2/2), 95% CI [0.34, 1.00], 1 skipped\n"
            "- check tone: pass 100% (3/3), 95% CI [0.44, 1.00]\n") in out


def _counts(entry: dict[str, Any]) -> tuple[Any, ...]:
    return (entry["check"], entry["runs"], entry["passed"], entry["failed"], entry["errors"],
            entry["skipped"], entry["scored"], entry["mean"] and round(entry["mean"], 4),
            entry["pass_rate"], [round(x, 3) for x in entry["pass_rate_ci"]])


def test_json_has_a_checks_list_per_leaderboard_entry_and_in_the_summary(repo: Path) -> None:
    doc = json.loads(report(repo, "ev", "--rev", "HEAD", "--format", "json"))
    (ev,) = doc["evals"]
    board = {e["model"]: e for e in ev["leaderboard"]}
    assert [_counts(c) for c in board["poor"]["checks"]] == [
        ("says", 3, 3, 0, 0, 0, 0, None, 1.0, [0.439, 1.0]),
        ("overlap", 3, 3, 0, 0, 0, 3, 0.8333, 1.0, [0.439, 1.0]),
        ("word", 3, 1, 1, 0, 1, 0, None, 0.5, [0.095, 0.905]),
        ("tone", 3, 0, 1, 2, 0, 1, 0.0, 0.0, [0.0, 0.793])]
    assert [_counts(c) for c in board["good"]["checks"]][2:] == [
        ("word", 3, 2, 0, 0, 1, 0, None, 1.0, [0.342, 1.0]),
        ("tone", 3, 3, 0, 0, 0, 3, 1.0, 1.0, [0.439, 1.0])]
    assert [_counts(c) for c in ev["summary"]["checks"]] == [
        ("says", 6, 6, 0, 0, 0, 0, None, 1.0, [0.61, 1.0]),
        ("overlap", 6, 6, 0, 0, 0, 6, 0.9167, 1.0, [0.61, 1.0]),
        ("word", 6, 3, 1, 0, 2, 0, None, 0.75, [0.301, 0.954]),
        ("tone", 6, 3, 1, 2, 0, 4, 0.75, 0.75, [0.301, 0.954])]
    tone = ev["summary"]["checks"][3]
    assert (tone["stderr"], tone["mean"]) == (0.25, 0.75)
    assert board["poor"]["runs"] == 1          # the entry's Runs: errored Grades left out


def test_csv_lines_checks_and_summary(repo: Path) -> None:
    checks = report(repo, "ev", "--rev", "HEAD", "--format", "csv", "--csv-lines", "checks")
    rows = list(csv.reader(io.StringIO(checks)))
    assert rows[0] == ["eval", "config", "model", "check", "runs", "passed", "failed",
                       "errors", "skipped", "pass_rate", "pass_rate_low", "pass_rate_high",
                       "scored", "mean"]
    assert [r[:10] + r[12:] for r in rows[1:]] == [
        ["ev", "default", "good", "says", "3", "3", "0", "0", "0", "1.0", "0", ""],
        ["ev", "default", "good", "overlap", "3", "3", "0", "0", "0", "1.0", "3", "1.0"],
        ["ev", "default", "good", "word", "3", "2", "0", "0", "1", "1.0", "0", ""],
        ["ev", "default", "good", "tone", "3", "3", "0", "0", "0", "1.0", "3", "1.0"],
        ["ev", "default", "poor", "says", "3", "3", "0", "0", "0", "1.0", "0", ""],
        ["ev", "default", "poor", "overlap", "3", "3", "0", "0", "0", "1.0", "3",
         "0.8333333333333334"],
        ["ev", "default", "poor", "word", "3", "1", "1", "0", "1", "0.5", "0", ""],
        ["ev", "default", "poor", "tone", "3", "0", "1", "2", "0", "0.0", "1", "0.0"]]
    summary = report(repo, ".", "--rev", "HEAD", "--format", "csv", "--csv-lines", "summary")
    assert summary == (
        "eval,config,model,runs,passed,failed,scored,mean,stderr,pass_rate,pass_rate_low,"
        "pass_rate_high\n"
        "ev,default,good,3,3,0,3,1.0,0.0,1.0,0.4385029682449546,1.0\n"
        "ev,default,poor,1,0,1,0,,,0.0,0.0,0.7934506856227626\n"
        "small,default,good,1,1,0,0,,,1.0,0.20654931437723745,1.0\n")
    runs = report(repo, "small", "--rev", "HEAD", "--format", "csv")
    assert runs == report(repo, "small", "--rev", "HEAD", "--format", "csv",
                          "--csv-lines", "runs")
    assert runs.startswith("eval,task,config,model,sample,run_id,")


def test_csv_lines_is_refused_with_another_format_or_value(repo: Path) -> None:
    res = run_cli("report", "ev", "--csv-lines", "checks", cwd=repo)
    assert (res.code, res.out) == (2, "")
    assert res.err == "Error: --csv-lines goes with --format csv, not markdown\n"
    res = run_cli("report", "ev", "--format", "csv", "--csv-lines", "tasks", cwd=repo)
    assert res.code == 2 and "'tasks' is not one of 'runs', 'checks', 'summary'" in res.err


def test_a_grader_of_one_check_adds_no_checks_table(repo: Path) -> None:
    out = report(repo, "small", "--rev", "HEAD")
    assert "## Checks" not in out and "- check " not in out
    (ev,) = json.loads(report(repo, "small", "--rev", "HEAD", "--json"))["evals"]
    assert [c["check"] for c in ev["summary"]["checks"]] == ["contains"]


SUITE_TABLE = """\
# Summary: 2 Evals

| Eval | config | model | runs | score | pass rate | 95% CI |
|---|---|---|---|---|---|---|
| ev | default | good | 3 | 1.00 ±0.00 | 100% (3/3) | [0.44, 1.00] |
| ev | default | poor | 1 | - | 0% (0/1) | [0.00, 0.79] |
| small | default | good | 1 | - | 100% (1/1) | [0.21, 1.00] |

# ev
"""


def test_a_suite_report_starts_with_its_summary_table(repo: Path) -> None:
    assert report(repo, ".", "--rev", "HEAD").startswith(SUITE_TABLE)
    doc = json.loads(report(repo, ".", "--rev", "HEAD", "--json"))
    assert [(s["eval"], s["model"], s["runs"], s["passed"], s["scored"]) for s in doc["suite"]] \
        == [("ev", "good", 3, 3, 3), ("ev", "poor", 1, 0, 0), ("small", "good", 1, 1, 0)]


def _diff(repo: Path, *args: str) -> tuple[int, str]:
    res = run_cli("diff", "HEAD", *args, cwd=repo)
    assert res.err == "", res.both
    return res.code, res.out


def test_a_flip_names_the_check_that_changed_and_its_reason(repo: Path) -> None:
    code, text = _diff(repo, "ev", "--format", "json")
    assert code == 0
    (ev,) = json.loads(text)["evals"]
    (flip,) = ev["flips"]
    assert (flip["task"], flip["model"], flip["direction"]) == ("capital", "good", "pass->fail")
    (changed,) = flip["checks_changed"]
    assert changed == {"check": "word",
                       "a": {"runs": 1, "passed": 1, "failed": 0, "errors": 0, "skipped": 0},
                       "b": {"runs": 1, "passed": 0, "failed": 1, "errors": 0, "skipped": 0}}
    (b_run,) = flip["b"]
    assert flip["reason"] == {"check": "word", "side": "b", "verdict": "fail",
                              "run_id": b_run["run_id"], "grade_id": b_run["grade_id"],
                              "notes": "output.txt does not contain 'Lyon'"}
    code, text = _diff(repo, "ev")
    assert (f"  - B: run {b_run['run_id']} grade {b_run['grade_id']}: fail\n"
            "  - Checks changed: word pass 1/1 -> 0/1\n"
            f"  - Why: check 'word' failed in B (run {b_run['run_id']}): output.txt does not "
            "contain 'Lyon'\n") in text


def test_a_fix_explains_the_failing_side_a(repo: Path, tmp_path: Path) -> None:
    # the other way round: B -> A is a fix, and the reason is read on side A (the commit's
    # working copy is the failing side, so compare the working tree with itself at HEAD)
    copy = tmp_path / "suite"
    shutil.copytree(repo, copy, symlinks=True)
    git(copy, "add", "-A")
    git(copy, "commit", "-qm", "Lyon")
    res = run_cli("diff", "HEAD", "HEAD~1", "ev", "--format", "json", cwd=copy)
    (ev,) = json.loads(res.out)["evals"]
    (flip,) = ev["flips"]
    assert flip["direction"] == "fail->pass"
    assert (flip["reason"]["side"], flip["reason"]["check"]) == ("a", "word")
    assert [c["check"] for c in flip["checks_changed"]] == ["word"]


def test_a_suite_diff_starts_with_its_summary_table(repo: Path) -> None:
    code, text = _diff(repo, ".")
    assert code == 0
    assert "\n\n## Summary: 2 Evals\n\n" + """\
| Eval | config | model | pass A | pass B | Δ pass | score A | score B \
| pass→fail / fail→pass | verdict |
|---|---|---|---|---|---|---|---|---|---|
| ev | default | good | 100% (3/3) | 67% (2/3) | -33.3 pts | 1.00 ±0.00 \
| 1.00 ±0.00 (n=2 of 3) | 1 / 0 | no significant change |
| ev | default | poor | 0% (0/1) | 0% (0/1) | +0.0 pts | - | 0.00 | 0 / 0 \
| no significant change |
| small | default | good | 100% (1/1) | 100% (1/1) | +0.0 pts | - | - | 0 / 0 \
| no significant change |

## ev
""" in text
    summary = json.loads(_diff(repo, ".", "--format", "json")[1])["suite"]
    assert [(s["eval"], s["model"], s["regressions"], s["fixes"], s["pass_rate_b"])
            for s in summary] == [("ev", "good", 1, 0, 2 / 3), ("ev", "poor", 0, 0, 0.0),
                                  ("small", "good", 0, 0, 1.0)]
    one = _diff(repo, "ev")[1]
    assert "## Summary" not in one         # one Eval: no summary table


# --- check_rows on records -------------------------------------------------------------


def test_check_rows_labels_repeated_checks_and_keeps_the_graders_order() -> None:
    grades: list[dict[str, Any]] = [
        {"checks": [{"checker": "contains", "ok": True}, {"checker": "contains", "ok": False},
                    {"checker": "regex", "name": "r", "ok": True, "score": True}]},
        {"checks": [{"checker": "first", "ok": True, "score": 0.5},
                    {"checker": "contains", "ok": True},
                    {"checker": "extra", "ok": False, "error": True},
                    {"checker": "regex", "name": "r", "skipped": True}, "not a check",
                    {"checker": "", "ok": True}]},
        {"checks": "damaged"},
    ]
    rows = [(r.check, r.runs, r.passed, r.failed, r.errors, r.skipped, r.scores)
            for r in check_rows(grades)]
    assert rows == [("first", 3, 1, 0, 0, 2, (0.5,)),
                    ("contains", 3, 2, 0, 0, 1, ()),
                    ("extra", 3, 0, 0, 1, 2, ()),        # placed after the Check before it
                    ("contains #2", 3, 0, 1, 0, 2, ()),
                    ("r", 3, 1, 0, 0, 2, ()),     # a boolean is not a score
                    ("(no checker)", 3, 1, 0, 0, 2, ())]
    assert check_rows([]) == []
    # the sums over two disjoint sets (a report's overall figures) are the figures of all
    assert merged([check_rows(grades[:1]), check_rows(grades[1:])], 3) == check_rows(grades)


def test_a_check_renamed_by_a_new_grader_version_is_skipped_on_one_side(repo: Path,
                                                                      tmp_path: Path) -> None:
    copy = tmp_path / "suite"
    shutil.copytree(repo, copy, symlinks=True)
    grader = copy / "ev/graders/default.yaml"
    grader.write_text(GRADER.replace("name: word", "name: keyword"))
    assert run_cli("grade", str(copy / "ev")).code == 2      # the judge's errors again
    res = run_cli("diff", "HEAD", "ev", cwd=copy)
    assert res.code == 0, res.both
    assert ("  - Checks changed: keyword skipped -> pass 0/1, word pass 1/1 -> skipped\n"
            "  - Why: check 'keyword' failed in B") in res.out
