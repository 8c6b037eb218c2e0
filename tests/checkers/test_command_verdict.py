"""The `command` checker's verdict cannot be written by the graded agent (issue 34 item 2):
files that configure or replace the test machinery are refused, Python runs isolated, the
JUnit report is written outside the tree and is the only source of figures, and a run that
ran fewer tests than the hidden files define fails.

Each case is a grader fixture (`smevals test`): the files the agent left, and the verdict
with the words its notes must hold. On main 06dc2af every attack case passed its Check."""

from __future__ import annotations

import os
import py_compile
import re
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers import make_eval, run_cli, write

STUB = "def is_leap(year):\n    raise NotImplementedError\n"
GOOD = "def is_leap(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n"
PYTEST_TESTS = """
from leap import is_leap


def test_plain():
    assert is_leap(2024)


def test_century():
    assert not is_leap(1900)


def test_four_hundred():
    assert is_leap(2000)


def test_odd():
    assert not is_leap(2023)
"""
UNITTEST_TESTS = """
import unittest

from leap import is_leap


class TestLeap(unittest.TestCase):
    def test_plain(self):
        self.assertTrue(is_leap(2024))

    def test_century(self):
        self.assertFalse(is_leap(1900))

    def test_four_hundred(self):
        self.assertTrue(is_leap(2000))

    def test_odd(self):
        self.assertFalse(is_leap(2023))
"""
PASSING_TEST = """
import unittest


class TestLeap(unittest.TestCase):
    def test_plain(self):
        pass
"""
FORCE_PASS = """
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
"""
FAKE_EXIT = ("import os, sys\nsys.stdout.write('{}')\nsys.stdout.flush()\nos._exit(0)\n")
PYTEST_SUMMARY = "....\\n4 passed in 0.01s\\n"
UNITTEST_SUMMARY = ("....\\n" + "-" * 70 + "\\nRan 4 tests in 0.001s\\n\\nOK\\n")
FEWER = """
import unittest

_names = unittest.TestLoader.getTestCaseNames
unittest.TestLoader.getTestCaseNames = lambda self, cls: _names(self, cls)[:1]


def is_leap(year):
    return year == 2024
"""
PYTEST_CASES = {
    "good": ("files: {leap.py: good.py}\ntampering: []", "pass", None),
    "conftest": ("files: {leap.py: stub.py, conftest.py: force.py}\ntampering: [conftest]",
                 "fail",
                 "refused, not run: the agent left conftest.py (a pytest conftest.py"),
    "conftest-deep": ("files: {leap.py: stub.py, sub/conftest.py: force.py}", "fail",
                      "sub/conftest.py (a pytest conftest.py"),
    "pytest-ini": ("files: {leap.py: stub.py, pytest.ini: ini.txt}", "fail",
                   "pytest.ini (a test runner's configuration)"),
    "tox-ini": ("files: {leap.py: stub.py, tox.ini: ini.txt}", "fail",
                "tox.ini (a test runner's configuration)"),
    "setup-cfg": ("files: {leap.py: stub.py, setup.cfg: setup.txt}", "fail",
                  "setup.cfg (a test runner's configuration)"),
    "pyproject": ("files: {leap.py: stub.py, pyproject.toml: pyproject.txt}", "fail",
                  "pyproject.toml (a test runner's configuration)"),
    "sitecustomize": ("files: {leap.py: stub.py, sitecustomize.py: stub.py}", "fail",
                      "sitecustomize.py (a file Python's site module runs at start-up)"),
    "pth": ("files: {leap.py: stub.py, x.pth: stub.py}", "fail", "x.pth (a file Python's"),
    "shadow-pytest": ("files: {leap.py: stub.py, pytest.py: stub.py}", "fail",
                      "pytest.py (named like a module of the standard library or the test "
                      "runner)"),
    "hidden-path": ("files: {leap.py: good.py, test_leap.py: passing.py}", "fail",
                    "test_leap.py (at a path a hidden file takes)"),
    "allowed": ("task: {name: leap, prompt: p, workspace: start, grading: {allow: "
                "[conftest.py]}}\nfiles: {leap.py: good.py, conftest.py: harmless.py}",
                "pass", None),
    "fake-summary": ("files: {leap.py: fake-pytest.py}", "fail",
                     "no test report was written: the test run ended before it finished"),
    "skips-at-import": ("files: {leap.py: skip.py}", "fail",
                        "no test ran (1 skipped); 1 test(s) ran, the hidden files define 4"),
}
UNITTEST_CASES = {
    "good": ("files: {leap.py: good.py}", "pass", None),
    "shadow-unittest": ("files: {leap.py: stub.py, unittest/__init__.py: stub.py, "
                        "unittest/__main__.py: fake-unittest.py}", "fail",
                        "unittest/ (named like a module of the standard library"),
    "shadow-json": ("files: {leap.py: good.py, json.py: stub.py}", "fail",
                    "json.py (named like a module of the standard library"),
    "load-tests": ("files: {leap.py: stub.py, __init__.py: load-tests.py}", "fail",
                   "__init__.py (a load_tests hook"),
    "fake-summary": ("files: {leap.py: fake-unittest.py}", "fail",
                     "no test report was written: the test run ended before it finished "
                     "(the unittest summary it printed, 4 of 4 passed, is not trusted)"),
    "fewer-tests": ("files: {leap.py: fewer.py}", "fail",      # exit 0, the one test passed
                    "1 test(s) ran, the hidden files define 4"),
    "bytecode": ("files: {leap.py: stub.py, __pycache__/test_leap.CACHE.pyc: forged.pyc}",
                 "fail", "4 of 4 tests failed"),
}


ENV_GRADER = r"""
checks:
  - checker: command
    name: isolated
    command: [python, -c, "import os, sys; assert sys.flags.isolated and sys.flags.no_user_site;
      assert os.getcwd() not in sys.path and '' not in sys.path;
      assert not [k for k in os.environ if k.startswith('PYTHON')]"]
    sandbox: {env: [PYTHONPATH, PYTHONSTARTUP]}
  - checker: command
    name: report-outside
    command: [python, -c, "import os; p = os.environ['SMEVALS_JUNIT'];
      assert os.path.isabs(p) and not p.startswith(os.getcwd()) and not os.path.exists(p)"]
  - checker: command
    name: placeholder
    command: test {junit} = "$SMEVALS_JUNIT" && test -f junit.xml
  - checker: command
    name: left-report
    command: "true"
    junit: true
scoring: {method: mean}
"""
ALL_PASS = ('<testsuites><testsuite name="s"><testcase classname="t" name="a"/>'
            '</testsuite></testsuites>\n')


def _cases(folder: Path, cases: dict[str, tuple[str, str, str | None]]) -> None:
    for name, (body, expect, notes) in cases.items():
        case = {"task": "leap", "output": "done", **yaml.safe_load(body), "expect": expect}
        if notes:
            case["notes"] = notes
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(case))
    sources = {"stub.py": STUB, "good.py": GOOD, "force.py": FORCE_PASS,
               "passing.py": PASSING_TEST, "harmless.py": "X = 1\n",
               "ini.txt": "[pytest]\naddopts = --collect-only -q\n",
               "setup.txt": "[tool:pytest]\naddopts = --collect-only\n",
               "pyproject.txt": "[tool.pytest.ini_options]\naddopts = '--collect-only'\n",
               "fake-pytest.py": FAKE_EXIT.format(PYTEST_SUMMARY),
               "fake-unittest.py": FAKE_EXIT.format(UNITTEST_SUMMARY),
               "skip.py": "import unittest\nraise unittest.SkipTest('not today')\n",
               "load-tests.py": "def load_tests(loader, tests, pattern):\n"
                                "    return loader.suiteClass()\n",
               "fewer.py": FEWER}
    for name, text in sources.items():
        (folder / name).write_text(text)


@pytest.fixture(scope="module")
def tested(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """`smevals test` over both graders' cases: grader -> case -> its line; "all" has the
    whole output and the exit code."""
    ev = make_eval(
        tmp_path_factory.mktemp("verdict") / "ev",
        tasks={"leap": "prompt: write is_leap\nworkspace: start\n"},
        graders={"pytest": "checks:\n  - checker: command\n"
                           "    command: python -m pytest -q -p no:cacheprovider test_leap.py\n"
                           "    files: hidden/pytest\n",
                 "unittest": "checks:\n  - checker: command\n"
                             "    command: python -m unittest discover -s . -p 'test_*.py'\n"
                             "    files: hidden/unittest\n",
                 "env": ENV_GRADER},
        files={"configs/echo.sh": "#!/bin/sh\necho hi\n", "start/leap.py": STUB,
               "hidden/pytest/test_leap.py": PYTEST_TESTS,
               "hidden/unittest/test_leap.py": UNITTEST_TESTS})
    for grader, cases in (("pytest", PYTEST_CASES), ("unittest", UNITTEST_CASES)):
        folder = ev / "graders" / f"{grader}.fixtures"
        folder.mkdir()
        _cases(folder, cases)
    forged = ev / "graders" / "unittest.fixtures"        # a passing test, compiled so that
    write(forged / "passing_src.py", PASSING_TEST)        # Python never checks its source
    py_compile.compile(str(forged / "passing_src.py"), str(forged / "forged.pyc"),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    case = forged / "bytecode.yaml"
    case.write_text(case.read_text().replace("CACHE", sys.implementation.cache_tag))
    env_cases = ev / "graders" / "env.fixtures"
    write(env_cases / "report.xml", ALL_PASS)
    write(env_cases / "left-report.yaml", """
        description: the agent left a passing report in the tree; the Check reads none there
        task: leap
        output: done
        files: {junit.xml: report.xml}
        expect: fail
        failing_check: left-report
        notes: "no test report was written: the test run ended before it finished"
        score: {min: 0.75, max: 0.75}
        """)
    res = run_cli("test", str(ev), env={"PYTHONPATH": str(ev), "PYTHONSTARTUP": str(ev)})
    out: dict[str, dict[str, str]] = {}
    grader = ""
    for line in res.out.splitlines():
        head = re.match(r"^ev/(\w+) \(grader version", line)
        if head:
            grader = head.group(1)
        elif re.match(r"^  [a-z]", line) and not line.startswith("  CASE"):
            out.setdefault(grader, {})[line.split()[0]] = line
    out["all"] = {"out": res.both, "code": str(res.code)}
    return out


@pytest.mark.parametrize("case", sorted(PYTEST_CASES))
def test_pytest_attacks_fail_and_honest_work_passes(tested, case: str) -> None:
    line = tested["pytest"][case]
    assert line.split()[3] == "ok", tested["all"]["out"]


@pytest.mark.parametrize("case", sorted(UNITTEST_CASES))
def test_unittest_attacks_fail_and_honest_work_passes(tested, case: str) -> None:
    line = tested["unittest"][case]
    assert line.split()[3] == "ok", tested["all"]["out"]


def test_python_runs_isolated_and_the_report_is_written_outside_the_tree(tested) -> None:
    """-I (no PYTHON* variable, no user site, the working folder not on the path), the
    report's path outside the tree (`{junit}`, `$SMEVALS_JUNIT`), and a report the agent left
    in the tree never read: the three other Checks pass (score 3/4)."""
    assert tested["env"]["left-report"].split()[3] == "ok", tested["all"]["out"]


def test_every_case_matched(tested) -> None:
    assert tested["all"]["code"] == "0", tested["all"]["out"]


def test_a_fixture_pins_the_tampering_kinds(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"leap": "prompt: p\nworkspace: start\n"},
                   graders={"default": "checks:\n  - checker: command\n"
                                       "    command: python -m pytest -q test_leap.py\n"
                                       "    files: hidden\n"},
                   files={"configs/echo.sh": "#!/bin/sh\necho hi\n", "start/leap.py": STUB,
                          "hidden/test_leap.py": PYTEST_TESTS})
    cases = ev / "graders" / "default.fixtures"
    write(cases / "force.py", FORCE_PASS)
    write(cases / "clean.yaml", "task: leap\noutput: x\nfiles: {conftest.py: force.py}\n"
                                "expect: fail\ntampering: []\n")
    write(cases / "wrong.yaml", "task: leap\noutput: x\nfiles: {conftest.py: force.py}\n"
                                "expect: fail\ntampering: [conftest, shadow]\n")
    write(cases / "bad.yaml", "task: leap\noutput: x\nexpect: fail\ntampering: [nope]\n")
    res = cli("test", str(ev))
    assert res.code == 2
    assert "bad.yaml:4:" in res.err and "tampering[0]" in res.err
    (cases / "bad.yaml").unlink()
    res = cli("test", str(ev))
    assert res.code == 1
    assert "      expected tampering [], got [conftest]\n" in res.out
    assert "      expected tampering [conftest, shadow], got [conftest]\n" in res.out


FAKE_DOCKER = """#!PYTHON
# a docker that runs the program here as the container would: its --volume mounts by their
# host paths, in its --workdir; a path the container has no mount for does not exist
import os, sys
args = sys.argv[1:]
if args[0] == "info":
    sys.exit(0)
args, mounts, workdir = args[1:], [], "/"
while args[0] != "fake/image:1":
    if args[0] in ("--rm", "--read-only"):
        args = args[1:]
        continue
    if args[0] == "--volume":
        source, target = args[1].split(":")[:2]
        mounts.append((target, source))
    if args[0] == "--workdir":
        workdir = args[1]
    args = args[2:]
mounts.sort(key=lambda m: -len(m[0]))

def host(value):
    for target, source in mounts:
        value = value.replace(target + "/", source + "/")
        if value == target:
            return source
    return value

report = os.environ["SMEVALS_JUNIT"]
if not any(report.startswith(target + "/") for target, _ in mounts):
    sys.exit(f"no such folder in the container: {report}")
env = {k: host(v) for k, v in os.environ.items()}
env["PATH"] = "PYTHON_DIR:" + env["PATH"]
os.chdir(host(workdir))
os.execvpe(args[1], [host(a) for a in args[1:]], env)
"""


def test_in_a_container_the_report_is_written_where_the_container_sees_it(
        cli, tmp_path: Path) -> None:
    """A container sees only what is mounted in it: the report folder is bound at the path
    the command is given, and the Checks find the report there (a fake `docker` runs the
    program with its mounts' host paths, in the container's working folder)."""
    bin_dir = tmp_path / "bin"
    fake = FAKE_DOCKER.replace("PYTHON_DIR", str(Path(sys.executable).parent))
    write(bin_dir / "docker", fake.replace("PYTHON", sys.executable, 1), executable=True)
    sandbox = "    sandbox: {backend: docker, image: 'fake/image:1'}\n"
    ev = make_eval(tmp_path / "ev", tasks={"leap": "prompt: p\nworkspace: start\n"},
                   graders={"default": "checks:\n  - checker: command\n    name: pytest\n"
                                       "    command: python -m pytest -q test_leap.py\n"
                                       "    files: hidden/pytest\n" + sandbox +
                                       "  - checker: command\n    name: unittest\n"
                                       "    command: python -m unittest -v test_leap\n"
                                       "    files: hidden/unittest\n" + sandbox},
                   files={"configs/echo.sh": "#!/bin/sh\necho hi\n", "start/leap.py": STUB,
                          "hidden/pytest/test_leap.py": PYTEST_TESTS,
                          "hidden/unittest/test_leap.py": UNITTEST_TESTS})
    cases = ev / "graders" / "default.fixtures"
    write(cases / "good.py", GOOD)
    write(cases / "good.yaml", "task: leap\noutput: x\nfiles: {leap.py: good.py}\n"
                               "expect: pass\nscore: {min: 1}\n")
    write(cases / "stub.yaml", "task: leap\noutput: x\nexpect: fail\nfailing_check: unittest\n"
                               "notes: 'command exited with code 1: 4 of 4 tests failed'\n")
    res = cli("test", str(ev), env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert res.code == 0, res.both
