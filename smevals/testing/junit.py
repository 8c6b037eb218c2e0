"""JUnit XML of `smevals test`: one testsuite per Eval and grader, one testcase per fixture."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree as ET


def junit_xml(results: list[tuple[str, list[Any]]]) -> str:
    """`results`: (suite name, its Outcomes). A mismatch is a <failure> with every reason."""
    root = ET.Element("testsuites", name="smevals test")
    total = failed = 0
    for name, outcomes in results:
        bad = sum(not o.ok for o in outcomes)
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(outcomes)),
                              failures=str(bad), errors="0",
                              time=f"{sum(o.seconds for o in outcomes):.3f}")
        for o in outcomes:
            case = ET.SubElement(suite, "testcase", classname=name, name=o.case.name,
                                 file=str(o.case.path), time=f"{o.seconds:.3f}")
            if not o.ok:
                failure = ET.SubElement(case, "failure", message="; ".join(o.mismatches),
                                        type="mismatch")
                failure.text = "\n".join([*o.mismatches, *([o.why] if o.why else [])])
        total += len(outcomes)
        failed += bad
    root.set("tests", str(total))
    root.set("failures", str(failed))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") \
        + "\n"
