"""smevals' unittest runner for the `command` checker: `python -m unittest ARGS` as unittest
runs it (the same arguments, the same output), plus a JUnit XML report of every test's
outcome written to the file SMEVALS_JUNIT names, so that the Check's figures come from
what ran, never from text the code under test could print.

It is not imported by smevals: the `command` checker passes this file's source to the
Python it runs, isolated (`python -I -c SOURCE ARGS`), so it uses the standard library only.
The working folder goes at the end of the import path, after the standard library and the
installed packages (`python -m unittest test_mod` finds the tree's modules; none of them can
stand in for a module of the standard library); `discover` puts its top folder first, as
unittest does. With SMEVALS_COLLECT_ONLY=1 it only counts the tests it would run and writes
`{"collected": N, "errors": E}` (E: test modules that could not be imported) instead.

The report is written at the end, to a new file renamed into place: a run that ends before
(`os._exit` at import, a kill) leaves none. Both variables are removed from the environment
before any test module is imported.
"""

from __future__ import annotations

import json
import os
import sys
import unittest
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import OptExcInfo

TEXT_CAP = 10000            # characters of a traceback kept in the report


def _split(test: unittest.TestCase) -> tuple[str, str]:
    ident = test.id()
    cls, _, name = ident.rpartition(".")
    return cls, name or ident


class _Result(unittest.TextTestResult):
    """unittest's own result, also keeping each test's outcome in order."""

    _exc_info_to_string: Any            # unittest.TestResult's, not in its stubs

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.outcomes: dict[str, tuple[str, str, tuple[str, str]]] = {}

    def _keep(self, test: unittest.TestCase, kind: str, text: str = "") -> None:
        key = test.id()
        if kind != "passed" and self.outcomes.get(key, ("passed",))[0] != "passed":
            return                      # the first failure of a test (subtests) is kept
        self.outcomes[key] = (kind, text, _split(test))

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        if test.id() not in self.outcomes:
            self._keep(test, "passed")

    def addFailure(self, test: unittest.TestCase, err: OptExcInfo) -> None:
        super().addFailure(test, err)
        self._keep(test, "failure", self._exc_info_to_string(err, test))

    def addError(self, test: unittest.TestCase, err: OptExcInfo) -> None:
        super().addError(test, err)
        self._keep(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        self._keep(test, "skipped", str(reason))

    def addExpectedFailure(self, test: unittest.TestCase, err: OptExcInfo) -> None:
        super().addExpectedFailure(test, err)
        self._keep(test, "skipped", "expected failure")

    def addUnexpectedSuccess(self, test: unittest.TestCase) -> None:
        super().addUnexpectedSuccess(test)
        self._keep(test, "failure", "unexpected success")

    def addSubTest(self, test: unittest.TestCase, subtest: unittest.TestCase,
                   err: OptExcInfo | None) -> None:
        super().addSubTest(test, subtest, err)
        if err is not None and err[0] is not None:
            kind = "failure" if issubclass(err[0], test.failureException) else "error"
            self._keep(test, kind, self._exc_info_to_string(err, test))


class _Runner(unittest.TextTestRunner):
    resultclass = _Result


def _count(suite: unittest.TestSuite) -> tuple[int, int]:
    """(tests, modules that failed to import) in `suite`."""
    tests = errors = 0
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            more, bad = _count(item)
            tests, errors = tests + more, errors + bad
        elif type(item).__name__ == "_FailedTest":
            errors += 1
        else:
            tests += 1
    return tests, errors


def _write(path: str, data: bytes) -> None:
    part = path + ".part"
    with open(part, "wb") as out:
        out.write(data)
    os.replace(part, path)


def _junit(result: _Result) -> bytes:
    root = ET.Element("testsuites", name="unittest")
    suite = ET.SubElement(root, "testsuite", name="unittest")
    counts = {"failure": 0, "error": 0, "skipped": 0}
    for kind, text, (cls, name) in result.outcomes.values():
        case = ET.SubElement(suite, "testcase", classname=cls, name=name)
        if kind != "passed":
            counts[kind] += 1
            child = ET.SubElement(case, kind, message=text.strip().splitlines()[-1][:500]
                                  if text.strip() else kind)
            child.text = text[-TEXT_CAP:]
    suite.set("tests", str(len(result.outcomes)))
    suite.set("failures", str(counts["failure"]))
    suite.set("errors", str(counts["error"]))
    suite.set("skipped", str(counts["skipped"]))
    data: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return data


def main() -> None:
    report = os.environ.pop("SMEVALS_JUNIT", "")
    collect = os.environ.pop("SMEVALS_COLLECT_ONLY", "") == "1"
    here = os.getcwd()
    if here not in sys.path:
        sys.path.append(here)

    class Program(unittest.TestProgram):
        test: unittest.TestSuite
        kept: _Result | None = None

        def runTests(self) -> None:
            if not collect:
                super().runTests()
                self.kept = self.result if isinstance(self.result, _Result) else None
                return
            tests, errors = _count(self.test)
            if report:
                _write(report, json.dumps({"collected": tests, "errors": errors}).encode())

    program = Program(module=None, argv=["python -m unittest", *sys.argv[1:]],
                      testRunner=_Runner, exit=False)
    result = program.kept
    if result is None:
        sys.exit(0)
    if report:
        _write(report, _junit(result))
    if not result.testsRun and not result.skipped:
        sys.exit(5)
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
