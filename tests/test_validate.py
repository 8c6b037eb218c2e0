"""`smevals validate`: every problem, located as path:line:col, exit 2; a summary on success."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import make_eval, write

GOOD_GRADER = "checks:\n  - checker: contains\n    value: says\n"


def test_good_eval_prints_summary(cli, evaldir: Path) -> None:
    res = cli("validate", str(evaldir))
    assert res.code == 0, res.err
    assert res.out == "OK: 1 eval, 2 tasks, 1 config, 1 grader; no problems\n"
    assert res.err == ""


def test_suite_is_searched_recursively_and_skips_hidden_and_stores(cli, tmp_path: Path) -> None:
    make_eval(tmp_path / "suite" / "a")
    make_eval(tmp_path / "suite" / "group" / "b")
    make_eval(tmp_path / "suite" / ".hidden" / "c")
    (tmp_path / "suite" / "a" / "results" / "runs").mkdir(parents=True)
    res = cli("validate", str(tmp_path / "suite"))
    assert res.out == "OK: 2 evals, 4 tasks, 2 configs, 2 graders; no problems\n"


# (relative file, content, expected problem line after "<eval>/")
BAD_INPUTS = [
    ("tasks/one.yaml", "prompt: [unclosed\n",
     "tasks/one.yaml:2:1: invalid YAML: did not find expected ',' or ']'"),
    ("tasks/one.yaml", "prompt: a\nprompt: b\n",
     "tasks/one.yaml:2:1: duplicate key 'prompt' (first defined on line 1)"),
    ("tasks/one.yaml", "prompt: a\nextra:\n\tkey: 1\n",
     "tasks/one.yaml:3:1: tab character used for indentation; YAML needs spaces"),
    ("tasks/one.yaml", "",
     "tasks/one.yaml:1:1: the top level must be a mapping, but the file is empty"),
    ("tasks/one.yaml", "- prompt: a\n",
     "tasks/one.yaml:1:1: the top level must be a mapping, but the file is a list"),
    ("eval.yaml", "name: x\ncolour: red\n",
     "eval.yaml:2:1: colour: unknown key 'colour' (allowed: configs, description, name)"),
    ("graders/default.yaml", "checks: x\n",
     "graders/default.yaml:1:9: checks: expected a list, got 'x'"),
    ("graders/default.yaml", "checks:\n  - value: says\n",
     "graders/default.yaml:2:5: checks[0]: 'checker' is required"),
    ("graders/default.yaml",
     "checks:\n  - checker: contains\n    value: a\n    required: \"yes\"\n",
     "graders/default.yaml:4:15: checks[0].required: expected a boolean (true or false), "
     "got 'yes'"),
    ("configs/default.yaml", "runner: ./echo.sh\nmodel: m1\ntimeout: -5\n",
     "configs/default.yaml:3:10: timeout: must be > 0, got -5"),
    ("tasks/one.yaml", "name: uno\nprompt: a\n",
     "tasks/one.yaml:1:7: name: task name 'uno' differs from its file name 'one.yaml' "
     "(rename one so they match)"),
    ("configs/default.yaml", "runner: ./missing.sh\nmodel: m1\n",
     "configs/default.yaml:1:9: runner: runner {ev}/configs/missing.sh is not a file"),
    ("configs/default.yaml", "runner: no-such-program-xyz\nmodel: m1\n",
     "configs/default.yaml:1:9: runner: runner 'no-such-program-xyz' was not found on PATH"),
    ("graders/default.yaml", "checks:\n  - checker: contans\n    value: a\n",
     "graders/default.yaml:2:14: checks[0].checker: unknown checker 'contans': not a built-in "
     "checker (did you mean 'contains'?), and no program of that name next to the grader or "
     "on PATH"),
    ("graders/default.yaml", "checks:\n  - checker: ./nope.py\n",
     "graders/default.yaml:2:14: checks[0].checker: checker program {ev}/graders/nope.py "
     "is not a file"),
    ("graders/default.yaml", "checks:\n  - checker: contains\n    value: a\n    colour: red\n",
     "graders/default.yaml:4:5: checks[0].colour: unknown option for checker 'contains' "
     "(known options: any, case_sensitive, casefold, file, fragments, threshold, value)"),
    ("graders/default.yaml", "checks:\n  - checker: regex\n",
     "graders/default.yaml:2:5: checks[0].pattern: "),
    ("graders/default.yaml", "scoring:\n  pass_threshold: 2\nchecks:\n  - checker: contains\n"
     "    value: a\n", "graders/default.yaml:2:19: scoring.pass_threshold: must be <= 1, got 2"),
    ("configs/default.yaml", "model: m1\n",
     "configs/default.yaml:1:1: 'runner' is required"),
    ("configs/default.yaml", "runner: smevals:openai\nmodel: m1\nheaders:\n  X-Team: 5\n",
     "configs/default.yaml:4:3: headers.X-Team: must be a string, not integer"),
    ("configs/default.yaml", "runner: smevals:openai\nmodel: m1\nbackoff: {base: 1, cap: -2}\n",
     "configs/default.yaml:3:20: backoff.cap: must be >= 0, not -2"),
    ("configs/default.yaml", "runner: smevals:openai\nmodel: m1\nretries: 1.5\n",
     "configs/default.yaml:3:1: retries: must be an integer, not number"),
    ("configs/default.yaml", "runner: smevals:replay\nmodel: m1\n",
     "configs/default.yaml:1:9: responses: required by smevals:replay"),
    ("configs/default.yaml", "runner: smevals:nosuch\nmodel: m1\n",
     "configs/default.yaml:1:9: runner: unknown built-in runner smevals:nosuch; built-ins: "
     "smevals:agent, smevals:claude-code, smevals:codex, smevals:llm, smevals:openai, "
     "smevals:pi, smevals:replay"),
]


@pytest.mark.parametrize(("rel", "content", "expected"), BAD_INPUTS,
                         ids=[f"{i}-{c[0]}" for i, c in enumerate(BAD_INPUTS)])
def test_bad_input_is_located(cli, tmp_path: Path, rel: str, content: str, expected: str) -> None:
    ev = make_eval(tmp_path / "ev")
    write(ev / rel, content)
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.code == 2
    assert res.out == ""
    lines = res.err.splitlines()
    want = "ev/" + expected.replace("{ev}", str(ev))
    assert any(line.startswith(want) for line in lines), res.err
    assert lines[-1] in ("1 problem found", "2 problems found")


def test_runner_not_executable(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev")
    (ev / "configs" / "echo.sh").chmod(0o644)
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.code == 2
    assert (f"ev/configs/default.yaml:1:9: runner: runner {ev}/configs/echo.sh is not "
            "executable (chmod +x echo.sh)") in res.err


def test_non_utf8_bytes(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev")
    (ev / "tasks" / "one.yaml").write_bytes(b"prompt: caf\xe9\n")
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.code == 2
    assert "ev/tasks/one.yaml:1:12: file is not valid UTF-8 (byte 0xe9)" in res.err


def test_two_tasks_with_one_name(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev")
    write(ev / "tasks" / "one.yml", "prompt: again\n")
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.code == 2
    assert "ev/tasks/one.yml:1:1: name: task name 'one' is already used by ev/tasks/one.yaml" \
        in res.err


def test_every_problem_is_listed(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev")
    write(ev / "tasks" / "one.yaml", "a: 1\na: 2\n")
    write(ev / "graders" / "default.yaml", "checks: x\n")
    write(ev / "configs" / "default.yaml", "model: m\n")
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.code == 2
    assert res.err.splitlines() == [
        "ev/tasks/one.yaml:2:1: duplicate key 'a' (first defined on line 1)",
        "ev/configs/default.yaml:1:1: 'runner' is required",
        "ev/graders/default.yaml:1:9: checks: expected a list, got 'x'",
        "3 problems found",
    ]


def test_json_output(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev")
    write(ev / "configs" / "default.yaml", "runner: ./echo.sh\nmodel: m1\ntimeout: 0\n")
    res = cli("validate", "--json", "ev", cwd=tmp_path)
    assert res.code == 2
    doc = json.loads(res.out)
    assert doc["ok"] is False
    assert doc["problems"] == [{"path": "ev/configs/default.yaml", "line": 3, "col": 10,
                                "field": "timeout", "message": "must be > 0, got 0"}]
    good = cli("validate", "--json", str(make_eval(tmp_path / "good")))
    assert json.loads(good.out) == {"ok": True, "evals": 1, "tasks": 2, "configs": 1,
                                    "graders": 1, "problems": [], "warnings": []}


@pytest.mark.parametrize("make", ["file", "empty-dir", "missing"])
def test_path_that_is_neither_eval_nor_suite(cli, tmp_path: Path, make: str) -> None:
    target = tmp_path / "thing"
    if make == "file":
        target.write_text("x")
    elif make == "empty-dir":
        target.mkdir()
    res = cli("validate", "thing", cwd=tmp_path)
    assert res.code == 2
    expected = {
        "file": "Error: thing is not an Eval or a Suite (expected a folder with eval.yaml)\n",
        "empty-dir": "Error: thing is not an Eval or a Suite: no eval.yaml in it or in any "
                     "folder below it\n",
        "missing": "Error: thing: no such file or folder\n",
    }[make]
    assert res.err == expected
