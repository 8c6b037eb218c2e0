"""The console explains itself: why a Grade failed, the end of a failed Run's stderr, what
`run --dry-run` finds stale."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
from pathlib import Path

from tests.helpers import SMEVALS, make_eval, write

ID = r"\d{8}T\d{6}Z-[0-9a-f]{12}"

CHECKS = """
checks:
  - checker: contains
    name: mentions rome
    value: Rome
  - checker: ./notes.py
"""
NOTES = """
#!/usr/bin/env python3
import json
print(json.dumps({"score": 0, "notes": "first line " + "x" * 150 + "\\nsecond line"}))
raise SystemExit(1)
"""


def ids(text: str) -> list[str]:
    return list(dict.fromkeys(re.findall(ID, text)))


def shape(text: str) -> str:
    return re.sub(ID, "ID", text)


def untimed(text: str) -> str:
    """How long each Run took, as (T): a loaded machine is slower, the lines are the same."""
    return re.sub(r"\(\d+\.\ds\)", "(T)", text)


def test_run_g_shows_the_first_failing_check(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"}, graders={"default": CHECKS},
                   files={"configs/echo.sh": "#!/bin/sh\necho Paris\n", "graders/notes.py": NOTES})
    res = cli("run", str(ev), "-g", cwd=tmp_path)
    assert res.code == 1
    assert untimed(shape(res.out)).splitlines()[1:] == [
        "t / default / m1 ... ok (T) -> ID",
        "    grade: fail",
        "    failed check 'mentions rome': output.txt does not contain 'Rome'",
        "1 ok, 0 failed"]


def test_grade_shows_the_first_failing_check_in_one_truncated_line(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   graders={"default": CHECKS.replace("    value: Rome\n",
                                                      "    value: Rome\n    required: false\n"),
                            "second": "checks:\n  - checker: ./notes.py\n"},
                   files={"configs/echo.sh": "#!/bin/sh\necho Paris\n", "graders/notes.py": NOTES})
    assert cli("run", str(ev), cwd=tmp_path).code == 0
    res = cli("grade", "ev", "-g", "second", cwd=tmp_path)
    assert res.code == 1
    assert shape(res.out).splitlines()[1:3] == [
        "t / default / m1 ID ... fail score=0",
        "    failed check './notes.py': first line " + "x" * 86 + "..."]


def test_a_grade_under_the_pass_threshold_says_so(cli, tmp_path: Path) -> None:
    grader = ("checks:\n  - checker: token_f1\n    value: Paris is it\n    threshold: 0\n"
              "scoring:\n  pass_threshold: 0.9\n")
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"}, graders={"default": grader},
                   files={"configs/echo.sh": "#!/bin/sh\necho Paris\n"})
    res = cli("run", str(ev), "-g", cwd=tmp_path)
    rec = json.loads(next((ev / "results" / "grades").rglob("grade.json")).read_text())
    assert rec["checks"][0]["ok"] is True and rec["outcome"] == "fail"
    assert (f"    grade: fail score={rec['score']:.3g}\n"
            f"    score {rec['score']:.3g} is below the grader's pass_threshold 0.9\n") in res.out


def test_failed_run_shows_the_end_of_stderr_and_the_show_command(cli, tmp_path: Path) -> None:
    runner = ("#!/bin/sh\necho partial\nfor i in 1 2 3 4 5 6 7; do echo \"line $i\" >&2; done\n"
              "echo >&2\nexit 3\n")
    make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"}, files={"configs/echo.sh": runner})
    res = cli("run", "ev", "-g", cwd=tmp_path)
    assert res.code == 1
    (run_id,) = ids(res.out)
    assert untimed(res.out).splitlines()[1:] == [
        f"t / default / m1 ... FAILED (exited with status 3) (T) -> {run_id}",
        "    stderr (last 5 lines):",
        "    | line 3", "    | line 4", "    | line 5", "    | line 6", "    | line 7",
        f"    see: smevals show {run_id} ev/results",
        "0 ok, 1 failed"]
    shown = cli("show", run_id, "ev/results", cwd=tmp_path)
    assert shown.code == 0
    assert shown.out.startswith(f"run {run_id}\n")


def test_failed_run_with_little_or_no_stderr_and_another_store(cli, tmp_path: Path) -> None:
    make_eval(tmp_path / "ev", tasks={"a": "prompt: p\n", "b": "prompt: q\n"},
              files={"configs/echo.sh": "#!/bin/sh\n[ \"$SMEVALS_TASK\" = a ] && "
                     "printf 'only %s\\n' \"$(printf 'y%.0s' $(seq 200))\" >&2\nexit 1\n"})
    res = cli("run", "ev", "--store", "elsewhere", "-j", "1", cwd=tmp_path)
    assert res.code == 1
    run_a, run_b = ids(res.out)
    assert untimed(res.out).splitlines()[1:] == [
        f"a / default / m1 ... FAILED (exited with status 1) (T) -> {run_a}",
        "    stderr:",
        "    | only " + "y" * 152 + "...",
        f"    see: smevals show {run_a} elsewhere/ev",
        f"b / default / m1 ... FAILED (exited with status 1) (T) -> {run_b}",
        "    stderr: (empty)",
        f"    see: smevals show {run_b} elsewhere/ev",
        "0 ok, 2 failed"]
    assert cli("show", run_b, "elsewhere/ev", cwd=tmp_path).code == 0


def test_on_a_terminal_failures_still_print_above_the_bar(tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"a": "prompt: p\n", "b": "prompt: q\n"},
                   graders={"default": "checks:\n  - checker: contains\n    value: a says\n"},
                   files={"configs/echo.sh": "#!/bin/sh\necho \"$SMEVALS_TASK says\"\n"
                          "[ \"$SMEVALS_TASK\" = b ] && echo oops >&2 && exit 2\nexit 0\n"})
    write(ev / "tasks" / "c.yaml", "prompt: r\n")
    master, slave = pty.openpty()
    try:
        proc = subprocess.run([SMEVALS, "run", "ev", "-g", "-j", "1"], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=slave, text=True, timeout=60,
                              env={**os.environ, "COLUMNS": "100"}, stdin=subprocess.DEVNULL)
    finally:
        os.close(slave)
        os.close(master)
    assert proc.returncode == 1
    assert untimed(shape(proc.stdout)).splitlines()[1:] == [
        "b / default / m1 ... FAILED (exited with status 2) (T) -> ID",
        "    stderr:", "    | oops", "    see: smevals show ID ev/results",
        "c / default / m1 ... ok (T) -> ID",
        "    grade: fail",
        "    failed check 'contains': output.txt does not contain 'a says'",
        "2 ok, 1 failed"]


def test_dry_run_counts_stale_runs_and_says_why(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"a": "prompt: p\n", "b": "prompt: q\n",
                                           "c": "prompt: r\n"})
    assert cli("run", "ev", "-n", "2", cwd=tmp_path).code == 0
    write(ev / "tasks" / "a.yaml", "prompt: p, edited\n")
    write(ev / "tasks" / "b.yaml", "prompt: q\ngrading:\n  expected: x\n")   # not an input
    res = cli("run", "ev", "-n", "2", "--dry-run", cwd=tmp_path)
    assert (res.code, res.out) == (0, (
        "ev: 2 Run(s) to make with config 'default' (3 task/model pair(s), 2 with earlier "
        "Runs of the same inputs; 2 stale Run(s) not counted: task edited)\n"
        "  a / default / m1: 0 current Run(s) + 2 stale (task edited), would run 2\n"
        "  b / default / m1: 2 Run(s) exist, would run 0\n"
        "  c / default / m1: 2 Run(s) exist, would run 0\n"))
    assert cli("run", "ev", "-t", "a", cwd=tmp_path).code == 0
    write(ev / "configs" / "echo.sh", "#!/bin/sh\necho changed\n", executable=True)
    write(ev / "configs" / "default.yaml", "runner: ./echo.sh\nmodel: m1\ntimeout: 9\n")
    res = cli("run", "ev", "-t", "a", "-t", "b", "--dry-run", cwd=tmp_path)
    assert res.out == (
        "ev: 2 Run(s) to make with config 'default' (2 task/model pair(s), 0 with earlier "
        "Runs of the same inputs; 5 stale Run(s) not counted: task edited, config changed, "
        "runner changed)\n"
        "  a / default / m1: 0 current Run(s) + 3 stale (task edited, config changed, runner "
        "changed), would run 1\n"
        "  b / default / m1: 0 current Run(s) + 2 stale (config changed, runner changed), "
        "would run 1\n")
    res = cli("run", "ev", "-t", "c", "--dry-run", "-m", "m2", cwd=tmp_path)
    assert res.out.splitlines()[1] == "  c / default / m2: 0 Run(s) exist, would run 1"
