"""The `command` checker end to end: hidden tests run in a sandboxed copy of the Run's final
workspace, scored from pytest's, unittest's or a JUnit report's counts; a command that hangs,
one that prints megabytes, bad JUnit XML."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from smevals.proc.policy import Policy
from smevals.proc.sandbox import describe
from tests.helpers import grade_records, make_eval, write

# `command` runs in its own view of the filesystem (smevals.proc.view)
SANDBOX = describe(Policy(1.0, {}))

AGENT = """
#!/bin/sh
find . -type f | sort
mkdir -p src
printf 'def add(a, b):\\n    return a + b\\n\\n\\n' > src/calc.py
printf 'def sub(a, b):\\n    return a + b\\n' >> src/calc.py
"""

PYTEST_TESTS = """
import sys
sys.path.insert(0, "src")
from calc import add, sub


def test_add():
    assert add(2, 3) == 5


def test_sub():
    assert sub(5, 3) == 2


def test_workspace_file():
    assert open("notes.txt").read() == "starting notes\\n"
"""

UNITTEST_TESTS = """
import os
import sys
import unittest
sys.path.insert(0, "src")
from calc import add, sub


class T(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_sub(self):
        self.assertEqual(sub(5, 3), 2)

    def test_err(self):
        raise RuntimeError("boom")

    @unittest.skip("not today")
    def test_skipped(self):
        pass
"""

JUNIT = """<?xml version="1.0"?>
<testsuites><testsuite name="s">
<testcase classname="calc" name="test_a"/>
<testcase classname="calc" name="test_b"><failure message="no"/></testcase>
<testcase classname="calc" name="test_c"><error message="boom"/></testcase>
<testcase classname="calc" name="test_d"/>
<testcase classname="calc" name="test_s"><skipped/></testcase>
</testsuite></testsuites>
"""

DTD = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>
<testsuites><testsuite name="&lol2;"/></testsuites>
"""

GRADER = """
checks:
  - checker: command
    name: pytest
    command: python -m pytest -q -p no:cacheprovider tests
    files: hidden
  - checker: command
    name: installed-plugin
    command: python -m pytest -q -p no:cacheprovider --timeout 30 tests
    files: hidden
  - checker: command
    name: named-plugin
    command: python -m pytest -q -p no:cacheprovider -p timeout --timeout 30 tests
    files: hidden
  - checker: command
    name: unittest
    command: [python, -m, unittest, discover, -s, more]
    files: [more/test_calc_ut.py]
  - checker: command
    name: junit
    command: cp report.xml {junit}
    junit: true
    files: [report.xml]
  - checker: command
    name: bad-junit
    command: printf '<testsuites><testcase' > "$SMEVALS_JUNIT"
    junit: true
  - checker: command
    name: dtd-junit
    command: [sh, -c, 'cp dtd.xml "$1"; exit 1', sh, "{junit}"]
    junit: true
    files: [dtd.xml]
  - checker: command
    name: no-junit
    command: "true"
    junit: true
  - checker: command
    name: hangs
    command: sleep 60
    timeout: 1
  - checker: command
    name: loud
    command: [python, -c, "import sys; sys.stdout.write('x' * 5000000)"]
    max_output_bytes: 1000
  - checker: command
    name: which-python
    command: [python, -c, "import sys; print(sys.executable)"]
  - checker: command
    name: writes
    command: rm -f src/calc.py && echo gone > notes.txt
  - checker: command
    name: after-writes
    command: cat src/calc.py notes.txt
"""


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    from tests.helpers import run_cli

    ev = make_eval(tmp_path_factory.mktemp("command") / "ev",
                   tasks={"calc": "prompt: write calc\nworkspace: start\n"},
                   configs={"default": "runner: ./agent.sh\nmodel: m1\n"},
                   graders={"default": GRADER},
                   files={"configs/agent.sh": AGENT, "start/notes.txt": "starting notes\n",
                          "hidden/tests/test_calc.py": PYTEST_TESTS,
                          "more/test_calc_ut.py": UNITTEST_TESTS,
                          "report.xml": JUNIT, "dtd.xml": DTD})
    res = run_cli("run", str(ev), "-g")
    assert res.code == 1, res.err               # the Grade fails: some tests fail
    (grade,) = grade_records(ev)
    return ev, {c["name"]: c for c in grade["checks"]}


def test_hidden_pytest_files_are_scored_and_the_agent_never_saw_them(graded) -> None:
    ev, checks = graded
    (run,) = (ev / "results" / "runs").rglob("run.json")
    assert (run.parent / "output.txt").read_text() == "./notes.txt\n"      # no tests/
    tail = checks["pytest"]["details"].pop("stdout")       # its end, in the details
    assert re.search(r"\n1 failed, 2 passed in [\d.]+s$", tail), tail
    assert checks["pytest"] == {
        "checker": "command", "name": "pytest", "ok": False, "score": 2 / 3,
        "notes": "command exited with code 1: 1 of 3 tests failed "
                 "(tests.test_calc.test_sub)",
        "details": {"exit_code": 1, "sandbox": SANDBOX, "failing": ["tests.test_calc.test_sub"],
                    "tests": {"from": "junit", "passed": 2, "total": 3}},
        "seconds": checks["pytest"]["seconds"]}
    (folder,) = {p.parent for p in (ev / "results" / "grades").rglob("grade.json")}
    assert "1 failed, 2 passed" in (folder / "command.pytest.stdout.txt").read_text()


def test_pytest_loads_only_the_plugins_the_command_names(graded) -> None:
    """pytest-timeout is installed here (a dev dependency), but the hidden tests' pytest
    loads no plugin the command does not name: `--timeout` is unknown to it, until `-p
    timeout` names the plugin."""
    checks = graded[1]
    assert checks["installed-plugin"]["ok"] is False
    assert checks["installed-plugin"]["notes"] == (
        "command exited with code 4; no test report was written: the test run ended before "
        "it finished")
    assert "unrecognized arguments: --timeout" in str(checks["installed-plugin"]["details"])
    named = checks["named-plugin"]
    assert (named["ok"], named["score"], named["notes"]) == (
        False, 2 / 3, checks["pytest"]["notes"])


def test_unittest_summary(graded) -> None:
    check = graded[1]["unittest"]
    assert check["score"] == 1 / 3
    assert check["details"]["tests"] == {"from": "junit", "passed": 1, "total": 3, "skipped": 1}
    assert check["details"]["failing"] == ["test_calc_ut.T.test_err", "test_calc_ut.T.test_sub"]
    assert check["notes"] == ("command exited with code 1: 2 of 3 tests failed "
                              "(test_calc_ut.T.test_err, test_calc_ut.T.test_sub)")


def test_junit_reports(graded) -> None:
    checks = graded[1]
    assert checks["junit"]["ok"] is False          # exit 0, but its own figures fail it
    assert checks["junit"]["notes"] == ("2 of 4 tests failed (calc.test_b, calc.test_c), "
                                        "though the command exited 0")
    assert checks["junit"]["score"] == 0.5
    assert checks["junit"]["details"]["failing"] == ["calc.test_b", "calc.test_c"]
    assert checks["junit"]["details"]["tests"] == {"from": "junit", "passed": 2, "total": 4,
                                                   "skipped": 1}
    assert checks["bad-junit"]["ok"] is False
    assert checks["bad-junit"]["notes"].startswith(
        "the test report is not well-formed XML (unclosed token: line 1")
    assert checks["dtd-junit"]["notes"] == ("command exited with code 1; the test report has a "
                                            "DTD or an entity declaration, which smevals "
                                            "refuses")
    assert checks["no-junit"]["notes"] == ("no test report was written: the test run ended "
                                           "before it finished")
    assert checks["no-junit"]["score"] == 0.0


def test_a_command_that_hangs_or_prints_megabytes(graded) -> None:
    ev, checks = graded
    assert checks["hangs"]["ok"] is False
    assert checks["hangs"]["notes"] == "command timed out after 1 s"
    assert checks["loud"]["notes"] == ("stdout passed the output cap of 1000 bytes (kept "
                                       "truncated; command stopped)")
    (folder,) = {p.parent for p in (ev / "results" / "grades").rglob("grade.json")}
    assert (folder / "command.loud.stdout.txt").read_bytes() == b"x" * 1000


def test_python_is_smevals_python_and_each_check_has_its_own_copy(graded) -> None:
    ev, checks = graded
    (folder,) = {p.parent for p in (ev / "results" / "grades").rglob("grade.json")}
    assert (folder / "command.which-python.stdout.txt").read_text() == sys.executable + "\n"
    assert checks["writes"]["ok"] is True
    assert (folder / "command.after-writes.stdout.txt").read_text().endswith(
        "    return a + b\nstarting notes\n")


@pytest.mark.parametrize(("check", "message"), [
    ("checker: command\n    files: x", "2:5: checks[0].command: missing required option"),
    ("checker: command\n    command: 'true'\n    files: ../x",
     "4:5: checks[0].files: may not contain '..' ('../x')"),
    ("checker: command\n    command: 'true'\n    junit: out/r.xml",
     "4:5: checks[0].junit: a report in the tree is no longer read (a file the agent left "
     "could stand in for it): write `junit: true` and have the command write the report to "
     "{junit} (e.g. --junitxml={junit}), a private path outside the tree"),
    ("checker: command\n    command: 'true'\n    expect_tests: 0",
     "4:5: checks[0].expect_tests: expected an integer >= 1, got 0"),
    ("checker: command\n    command: []",
     "3:5: checks[0].command: expected a command line (run by sh -c) or a non-empty list of "
     "arguments, got []"),
])
def test_bad_options_are_refused_by_validate(cli, tmp_path: Path, check: str,
                                              message: str) -> None:
    ev = make_eval(tmp_path / "ev", graders={"default": f"checks:\n  - {check}\n"})
    res = cli("validate", str(ev))
    assert res.code == 2
    assert f"graders/default.yaml:{message}\n" in res.err


def test_hidden_files_that_are_missing_fail_the_check(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", graders={"default": textwrap.dedent("""
        checks:
          - checker: command
            command: "true"
            files: hidden
        """)})
    write(ev / "tasks" / "one.yaml", "prompt: hi\n")
    res = cli("run", str(ev), "-g")
    assert res.code == 1
    (grade,) = [g for g in grade_records(ev) if g["run"]["task"] == "one"]
    assert grade["checks"][0]["notes"] == "files: no such folder 'hidden' in the Eval folder"


def test_editing_a_hidden_file_is_a_new_grader_version(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hi\n"},
                   graders={"default": "checks:\n  - checker: command\n    command: cat t.txt\n"
                                       "    files: hidden\n"},
                   files={"configs/echo.sh": "#!/bin/sh\necho hi\n", "hidden/t.txt": "v1\n"})
    assert cli("run", str(ev), "-g").code == 0
    assert "0 Run(s)" in cli("grade", str(ev)).out            # nothing out of date
    (ev / "hidden" / "t.txt").write_text("v2\n")
    res = cli("grade", str(ev))
    assert res.code == 0, res.err
    assert "grading 1 Run(s)" in res.out
    versions = {g["grader"]["version"] for g in grade_records(ev)}
    assert len(versions) == 2


def test_fixtures_of_a_task_with_starting_files(cli, tmp_path: Path) -> None:
    """`smevals test`: a case's files are the agent's work over the Task's starting files."""
    ev = make_eval(tmp_path / "ev", tasks={"calc": "prompt: p\nworkspace: start\n"},
                   graders={"default": "checks:\n  - checker: command\n"
                                       "    command: python -m pytest -q -p no:cacheprovider\n"
                                       "    files: hidden\n"},
                   files={"configs/echo.sh": "#!/bin/sh\necho hi\n",
                          "start/notes.txt": "starting notes\n",
                          "hidden/test_calc.py": PYTEST_TESTS.replace('"src"', '"."')})
    fixtures = ev / "graders" / "default.fixtures"
    write(fixtures / "good.yaml", "task: calc\noutput: done\nfiles: {calc.py: good.py}\n"
                                  "expect: pass\n")
    write(fixtures / "bad.yaml", "task: calc\noutput: done\nfiles: {calc.py: bad.py}\n"
                                 "expect: fail\nscore: {min: 0.66, max: 0.67}\n")
    write(fixtures / "good.py", "def add(a, b):\n    return a + b\n\n\n"
                                "def sub(a, b):\n    return a - b\n")
    write(fixtures / "bad.py", "def add(a, b):\n    return a + b\n\n\n"
                               "def sub(a, b):\n    return a + b\n")
    res = cli("test", str(ev))
    assert res.code == 0, res.both
    assert "2 case(s): 2 ok, 0 mismatch(es)" in res.out
