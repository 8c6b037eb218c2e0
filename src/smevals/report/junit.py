"""The one JUnit XML writer: `smevals report --format junit` (report/formats.py) and
`smevals test --junit` (graderfixtures/junit.py) hand it their suites and cases.

Every `<testsuite>` and the `<testsuites>` root carry the counts of the cases below them
(tests, failures, errors, skipped) and the sum of their times.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:       # imported where used: a report in Markdown never needs it
    import xml.etree.ElementTree as ET

# A case's verdict element and the attribute that counts it.
COUNTED = (("failure", "failures"), ("error", "errors"), ("skipped", "skipped"))


@dataclass(frozen=True)
class Verdict:
    """What a case says beside passing: a `failure`, an `error`, `skipped`, or (for a pass
    worth a note) `system-out`."""

    tag: str
    text: str | None = None
    type: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class Case:
    classname: str
    name: str
    seconds: float
    file: str | None = None
    verdict: Verdict | None = None


@dataclass(frozen=True)
class Suite:
    name: str
    cases: list[Case]


def junit_xml(name: str, suites: Iterable[Suite]) -> str:
    """The document: a `<testsuites>` named `name`, the suites in the order given."""
    import xml.etree.ElementTree as ET

    root = ET.Element("testsuites", name=name)
    for suite in suites:
        node = ET.SubElement(root, "testsuite", name=suite.name)
        for case in suite.cases:
            _case(node, case)
        _totals(node)
    _totals(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") \
        + "\n"


def _case(suite: ET.Element, case: Case) -> None:
    from xml.etree.ElementTree import SubElement

    attrs = {"classname": case.classname, "name": case.name}
    if case.file is not None:
        attrs["file"] = case.file
    node = SubElement(suite, "testcase", attrs, time=f"{case.seconds:.3f}")
    verdict = case.verdict
    if verdict is None:
        return
    attrs = {key: value for key, value in (("type", verdict.type), ("message", verdict.message))
             if value is not None}
    SubElement(node, verdict.tag, attrs).text = verdict.text


def _totals(node: ET.Element) -> None:
    cases = list(node.iter("testcase"))
    node.set("tests", str(len(cases)))
    for tag, attr in COUNTED:
        node.set(attr, str(sum(1 for c in cases if c.find(tag) is not None)))
    node.set("time", f"{sum(float(c.get('time', '0')) for c in cases):.3f}")
