"""`validate` (and `run`/`grade`, before any runner or checker starts) finds Task keys a
check reads but a Task lacks (an error), and misspelt top-level Task keys (a warning)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import make_eval, write

READS = "checks:\n  - checker: exact_match\n    expected: {task: answer}\n"
TASKS = {"a": "prompt: p\ngrading:\n  answer: x\n",
         "b": "prompt: q\nanswer: x\n",
         "c": "prompt: r\ngrading:\n  answr: z\n"}


def test_a_task_key_a_task_lacks_is_an_error(cli, tmp_path: Path) -> None:
    make_eval(tmp_path / "ev", tasks=TASKS, graders={"default": READS})
    res = cli("validate", "ev", cwd=tmp_path)
    assert (res.code, res.out) == (2, "")
    assert res.err.splitlines() == [
        "ev/graders/default.yaml:3:15: checks[0].expected: {task: answer} reads the Task key "
        "'answer', which Task 'c' (ev/tasks/c.yaml) lacks (did you mean 'answr'?)",
        "1 problem found"]


def test_many_tasks_lacking_a_key_are_one_problem_and_json_lists_it(cli, tmp_path: Path) -> None:
    tasks = {f"t{i}": "prompt: p\n" for i in range(5)}
    grader = "checks:\n  - checker: contains\n    value: ok\n" + READS.split("\n", 1)[1]
    make_eval(tmp_path / "ev", tasks=tasks, graders={"default": grader})
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.err.splitlines() == [
        "ev/graders/default.yaml:5:15: checks[1].expected: {task: answer} reads the Task key "
        "'answer', which 5 Tasks lack: t0, t1, t2 and 2 more",
        "1 problem found"]
    doc = json.loads(cli("validate", "--json", "ev", cwd=tmp_path).out)
    assert doc["problems"] == [{
        "path": "ev/graders/default.yaml", "line": 5, "col": 15, "field": "checks[1].expected",
        "message": "{task: answer} reads the Task key 'answer', which 5 Tasks lack: t0, t1, t2 "
                   "and 2 more"}]
    assert doc["warnings"] == []


def test_an_option_filled_from_the_task_by_default_is_checked_too(cli, tmp_path: Path) -> None:
    make_eval(tmp_path / "ev", tasks={"a": "prompt: p\ngrading:\n  expected: x\n",
                                      "b": "prompt: q\n"},
              graders={"default": "checks:\n  - checker: exact_match\n"})
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.err.splitlines() == [
        "ev/graders/default.yaml:2:5: checks[0].expected: checker 'exact_match' needs the "
        "option 'expected' or the Task key 'expected', which Task 'b' (ev/tasks/b.yaml) lacks",
        "1 problem found"]


def test_a_misspelt_task_key_is_a_warning(cli, tmp_path: Path) -> None:
    make_eval(tmp_path / "ev", tasks={"a": "prompt: p\ngradng:\n  expected: x\n",
                                      "b": "promt: q\nmessage: hi\nanswer: 1\n"})
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.code == 0
    assert res.out == "OK: 1 eval, 2 tasks, 1 config, 1 grader; no problems, 3 warnings\n"
    assert res.err.splitlines() == [
        "ev/tasks/a.yaml:2:1: warning: gradng: unknown Task key 'gradng' - did you mean "
        "'grading'? (as written it is an ordinary key, given to runners)",
        "ev/tasks/b.yaml:1:1: warning: promt: unknown Task key 'promt' - did you mean "
        "'prompt'? (as written it is an ordinary key, given to runners)",
        "ev/tasks/b.yaml:2:1: warning: message: unknown Task key 'message' - did you mean "
        "'messages'? (as written it is an ordinary key, given to runners)"]
    doc = json.loads(cli("validate", "--json", "ev", cwd=tmp_path).out)
    assert doc["ok"] is True
    assert doc["warnings"][0] == {
        "path": "ev/tasks/a.yaml", "line": 2, "col": 1, "field": "gradng",
        "message": "unknown Task key 'gradng' - did you mean 'grading'? (as written it is an "
                   "ordinary key, given to runners)"}


def test_warnings_and_errors_together(cli, tmp_path: Path) -> None:
    make_eval(tmp_path / "ev", tasks={"a": "prompt: p\ngradng:\n  expected: x\n"},
              graders={"default": "checks:\n  - checker: exact_match\n"})
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.code == 2
    assert res.err.splitlines() == [
        "ev/graders/default.yaml:2:5: checks[0].expected: checker 'exact_match' needs the "
        "option 'expected' or the Task key 'expected', which Task 'a' (ev/tasks/a.yaml) lacks",
        "ev/tasks/a.yaml:2:1: warning: gradng: unknown Task key 'gradng' - did you mean "
        "'grading'? (as written it is an ordinary key, given to runners)",
        "1 problem found (and 1 warning)"]


def test_run_and_grade_check_first_and_call_no_runner(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks=TASKS, graders={"default": READS},
                   files={"configs/echo.sh": "#!/bin/sh\ntouch \"$SMEVALS_EVAL_DIR/ran\"\n"
                          "echo x\n"})
    res = cli("run", "ev", "-g", cwd=tmp_path)
    assert (res.code, res.out) == (2, "")
    assert res.err == ("Error: ev/graders/default.yaml:3:15: checks[0].expected: {task: answer} "
                       "reads the Task key 'answer', which Task 'c' (ev/tasks/c.yaml) lacks "
                       "(did you mean 'answr'?)\n")
    assert not (ev / "ran").exists() and not (ev / "results").exists()
    # only the Tasks picked count; without -g no grader is involved
    assert cli("run", "ev", "-g", "-t", "a", "-t", "b", cwd=tmp_path).code == 0
    assert cli("run", "ev", "-t", "c", cwd=tmp_path).code == 0
    res = cli("grade", "ev", cwd=tmp_path)
    assert (res.code, res.out) == (2, "")
    assert "which Task 'c' (ev/tasks/c.yaml) lacks" in res.err
    res = cli("grade", "ev", "-t", "a", cwd=tmp_path)
    assert res.code == 0, res.err


def test_run_and_grade_print_warnings_and_go_on(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"a": "prompt: p\nPrompt: q\n"})
    res = cli("run", "ev", "-g", cwd=tmp_path)
    assert res.code == 0
    assert res.err == ("ev/tasks/a.yaml:2:1: warning: Prompt: unknown Task key 'Prompt' - did "
                       "you mean 'prompt'? (as written it is an ordinary "
                       "key, given to runners)\n")
    write(ev / "graders" / "default.yaml", "checks:\n  - checker: contains\n    value: p\n")
    res = cli("grade", "ev", cwd=tmp_path)
    assert res.code == 0
    assert res.err.startswith("ev/tasks/a.yaml:2:1: warning: Prompt: ")
