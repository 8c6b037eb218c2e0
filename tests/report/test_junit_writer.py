"""One JUnit writer (report/junit.py): `smevals test --junit` counts its cases as
`smevals report --format junit` does (tests, failures, errors, skipped and time on every
testsuite and on the root)."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree as ET

from tests.helpers import make_eval, write

GRADER = "checks:\n  - checker: contains\n    value: rain\n"
COUNTS = ["tests", "failures", "errors", "skipped", "time"]


def test_fixtures_junit_carries_the_reports_counts(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"poem": "prompt: a poem\n"},
                   graders={"default": GRADER})
    fixtures = ev / "graders" / "default.fixtures"
    write(fixtures / "good.yaml", "task: poem\noutput: rain falls\nexpect: pass\n")
    write(fixtures / "wrong.yaml", "task: poem\noutput: sun\nexpect: pass\n")
    res = cli("test", "ev", "--junit", "junit.xml", cwd=tmp_path)
    assert res.code == 1, res.both
    text = (tmp_path / "junit.xml").read_text()
    root = ET.fromstring(text)
    [suite] = root
    assert [root.tag, *root.attrib] == ["testsuites", "name", *COUNTS]
    assert [suite.tag, *suite.attrib] == ["testsuite", "name", *COUNTS]
    counts = [root.get(key) for key in COUNTS[:4]]
    assert counts == [suite.get(key) for key in COUNTS[:4]] == ["2", "1", "0", "0"]
    wrong = {case.get("name"): case for case in suite}["wrong"]
    assert list(wrong.attrib) == ["classname", "name", "file", "time"]
    failure = wrong.find("failure")
    assert failure is not None and list(failure.attrib) == ["type", "message"]
    assert failure.get("type") == "mismatch"
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="smevals '
                           'test" tests="2" failures="1" errors="0" skipped="0" time="')
