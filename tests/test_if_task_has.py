"""A Check with `if_task_has: KEY` applies only to the Tasks that have KEY: left out of the
other Tasks' Grades, of `validate`'s Task-key checks and of `grade --dry-run`'s judge calls."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_cli, write


def _eval(root: Path, grader: str) -> Path:
    write(root / "eval.yaml", "description: x\n")
    write(root / "tasks/t.jsonl", '{"name": "a", "prompt": "p", "grading": {"word": "yes"}}\n'
                                  '{"name": "b", "prompt": "q"}\n')
    write(root / "configs/default.yaml", "runner: smevals:replay\nresponses: r.jsonl\nmodel: m\n")
    write(root / "configs/r.jsonl", '{"task": "a", "model": "m", "output": "yes"}\n'
                                    '{"task": "b", "model": "m", "output": "no"}\n')
    write(root / "graders/default.yaml", grader)
    return root


def test_if_task_has_limits_a_check_to_the_tasks_with_the_key(tmp_path: Path) -> None:
    ev = _eval(tmp_path / "ev", "checks:\n  - checker: contains\n    value: {task: word}\n"
                                "    if_task_has: word\n  - checker: regex\n    pattern: .\n")
    assert run_cli("validate", str(ev)).code == 0
    ran = run_cli("run", str(ev), "-g")
    assert ran.code == 0, ran.both
    checks = {}
    for path in (ev / "results").rglob("grade.json"):
        rec = json.loads(path.read_text())
        checks[rec["run"]["task"]] = [c["checker"] for c in rec["checks"]]
    assert checks == {"a": ["contains", "regex"], "b": ["regex"]}
    write(ev / "graders/default.yaml", "checks:\n  - checker: contains\n    value: {task: word}\n")
    bad = run_cli("validate", str(ev))
    assert bad.code == 2
    assert "reads the Task key 'word', which Task 'b'" in bad.err


def test_if_task_has_leaves_judge_calls_out_of_grade_dry_run(tmp_path: Path) -> None:
    ev = _eval(tmp_path / "ev", "judge:\n  model: j\nchecks:\n  - checker: llm_judge\n"
                                "    rubric: Is polite\n    if_task_has: word\n")
    assert run_cli("run", str(ev)).code == 0
    dry = run_cli("grade", str(ev), "--dry-run")
    assert dry.out == "Would grade 2 Run(s); judge calls: 1 (0 from the judge cache, 1 to make)\n"


def test_a_grade_to_which_no_check_applied_is_an_error_never_a_pass(tmp_path: Path) -> None:
    ev = _eval(tmp_path / "ev", "checks:\n  - checker: contains\n    value: {task: word}\n"
                                "    if_task_has: word\n")
    ran = run_cli("run", str(ev), "-g")
    assert ran.code == 2, ran.both
    assert ran.err == ("Error: 1 Grade(s) have no verdict (outcome error): no Check of the "
                       "grader applied to their Task\n")
    assert "    no Check applied to Task 'b': every Check has an if_task_has key the Task " \
           "lacks (word)\n" in ran.out
    grades = {}
    for path in (ev / "results").rglob("grade.json"):
        rec = json.loads(path.read_text())
        grades[rec["run"]["task"]] = (rec["outcome"], rec["score"], rec["checks"])
    assert grades["a"][0] == "pass"
    assert grades["b"] == ("error", None, [{
        "checker": "none", "name": "no Check applied", "ok": False, "error": True,
        "score": None, "notes": "no Check applied to Task 'b': every Check has an if_task_has "
                                "key the Task lacks (word)"}])
    again = run_cli("grade", str(ev))           # not graded again: nothing can change
    assert again.code == 0, again.both
    assert "Skipped 2 Run(s) already graded by this grader version" in again.out
    fresh = run_cli("regrade", str(ev))
    assert fresh.code == 2
    assert fresh.err == ("Error: 1 of 2 Grade(s) have no verdict (outcome error): no Check of "
                         "the grader applied to their Task (see above)\n")
    assert "Graded 2 Run(s): 1 pass, 0 fail, 1 error" in fresh.out
