"""`smevals test --junit`: one testsuite per Eval and grader, one testcase per fixture (the
document is written by report/junit.py, the one JUnit writer)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from smevals.report import junit

if TYPE_CHECKING:
    from smevals.graderfixtures.harness import Outcome


def junit_xml(results: list[tuple[str, list[Any]]]) -> str:
    """`results`: (suite name, its Outcomes). A mismatch is a <failure> with every reason; a
    case a missing optional dependency kept from being graded is an <error> saying which."""
    suites = [junit.Suite(name, [junit.Case(name, o.case.name, o.seconds, str(o.case.path),
                                            _verdict(o)) for o in outcomes])
              for name, outcomes in results]
    return junit.junit_xml("smevals test", suites)


def _verdict(outcome: Outcome) -> junit.Verdict | None:
    if outcome.missing:
        return junit.Verdict("error", "\n".join(outcome.missing), "missing_dependency",
                             "; ".join(outcome.missing))
    if not outcome.ok:
        return junit.Verdict("failure", "\n".join(
            [*outcome.mismatches, *([outcome.why] if outcome.why else [])]), "mismatch",
            "; ".join(outcome.mismatches))
    return None
