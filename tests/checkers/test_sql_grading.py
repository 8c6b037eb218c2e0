"""The SQL checkers end to end: a grader whose database is a .sql script beside it; editing the
script makes the Grades out of date; a missing or broken database is reported, never a crash."""

from __future__ import annotations

from pathlib import Path

from smevals.evaldef.load import display_path
from tests.helpers import make_eval, run_cli

SAY = '#!/bin/sh\nprintf "%s\\n" "$SMEVALS_PROMPT"\n'
GRADER = """
checks:
  - checker: sql_valid
    database: data.sql
    required: true
  - checker: sql_execution
    database: data.sql
    reference: {task: reference}
"""


def sql_eval(root: Path, script: str = "CREATE TABLE t (x);\nINSERT INTO t VALUES (1), (2);\n"
             ) -> Path:
    return make_eval(root, tasks={"count": "prompt: SELECT count(*) FROM t\n"
                                           "grading:\n  reference: SELECT 2\n"},
                     configs={"default": "runner: ./say.sh\nmodel: m1\n"},
                     graders={"default": GRADER},
                     files={"configs/say.sh": SAY, "graders/data.sql": script})


def test_editing_the_database_script_makes_the_grades_out_of_date(tmp_path: Path) -> None:
    ev = sql_eval(tmp_path / "ev")
    res = run_cli("run", str(ev), "-g")
    assert (res.code, res.err) == (0, ""), res.both
    assert "    grade: pass score=1\n" in res.out

    res = run_cli("grade", str(ev))
    assert res.code == 0 and "Skipped 1 Run(s) already graded by this grader version" in res.out

    with (ev / "graders" / "data.sql").open("a") as script:
        script.write("INSERT INTO t VALUES (3);\n")
    res = run_cli("grade", str(ev))
    assert res.code == 1, res.both
    assert "    failed check 'sql_execution': the rows differ from the expected ones\n" in res.out
    assert "1 Run(s) graded again: they had Grades only from older grader versions" in res.out


def test_a_database_that_is_not_there_is_a_validation_error(tmp_path: Path) -> None:
    ev = sql_eval(tmp_path / "ev")
    (ev / "graders" / "data.sql").rename(ev / "graders" / "moved.sql")
    res = run_cli("validate", str(ev))
    shown = display_path(ev / "graders" / "default.yaml")     # as verify and validate show it
    assert (res.code, res.out) == (2, ""), res.both
    assert res.err == (f"{shown}:3:5: checks[0].database: no such file: data.sql (relative to "
                       f"the grader's folder)\n{shown}:6:5: checks[1].database: no such file: "
                       f"data.sql (relative to the grader's folder)\n2 problems found\n")
    res = run_cli("run", str(ev), "-g")
    assert res.code == 2 and "Traceback" not in res.both
    assert "checks[0].database: no such file: data.sql" in res.err


def test_a_script_that_fails_to_build_fails_the_check_with_sqlite_s_reason(tmp_path: Path
                                                                         ) -> None:
    ev = sql_eval(tmp_path / "ev", script="CREATE TABLE t (x);\nINSERT INTO u VALUES (1);\n")
    res = run_cli("run", str(ev), "-g")
    assert res.code == 1 and "Traceback" not in res.both, res.both
    assert ("    failed check 'sql_valid': option 'database': the script data.sql failed to "
            "build: no such table: u\n") in res.out
