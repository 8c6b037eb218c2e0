"""JUnit XML of `smevals test`: one testsuite per Eval and grader, one testcase per fixture."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree as ET


def junit_xml(results: list[tuple[str, list[Any]]]) -> str:
    """`results`: (suite name, its Outcomes). A mismatch is a <failure> with every reason; a
    case a missing optional dependency kept from being graded is an <error> saying which."""
    root = ET.Element("testsuites", name="smevals test")
    total = failed = errors = 0
    for name, outcomes in results:
        bad = sum(bool(o.mismatches) for o in outcomes)
        unrun = sum(bool(o.missing) for o in outcomes)
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(outcomes)),
                              failures=str(bad), errors=str(unrun),
                              time=f"{sum(o.seconds for o in outcomes):.3f}")
        for o in outcomes:
            case = ET.SubElement(suite, "testcase", classname=name, name=o.case.name,
                                 file=str(o.case.path), time=f"{o.seconds:.3f}")
            if o.missing:
                error = ET.SubElement(case, "error", message="; ".join(o.missing),
                                      type="missing_dependency")
                error.text = "\n".join(o.missing)
            elif not o.ok:
                failure = ET.SubElement(case, "failure", message="; ".join(o.mismatches),
                                        type="mismatch")
                failure.text = "\n".join([*o.mismatches, *([o.why] if o.why else [])])
        total += len(outcomes)
        failed += bad
        errors += unrun
    root.set("tests", str(total))
    root.set("failures", str(failed))
    root.set("errors", str(errors))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") \
        + "\n"
