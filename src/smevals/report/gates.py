"""CI gates: `--fail-under SCORE` and `--min-pass-rate RATE`, checked per config x model.

A gate trips (exit 1) when any config x model of any Eval falls below it. A group with no
scored Run cannot show a mean score, so it trips --fail-under (fail closed), and so does one
whose Grades are not all scored (the mean would be over a subset chosen by the outcome); a
report with no graded Run at all trips every gate that is set. Missing evidence trips them too: a
config x model with current Runs that are ungraded or whose Grade is an error
(`smevals.report.evidence`), unless `allow_incomplete`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from smevals.report.document import EvalReport
from smevals.report.evidence import report_reasons
from smevals.report.jsondoc import GateLimits
from smevals.report.summary import Group


class GateError(ValueError):
    """A gate value that is not usable (bad input, exit 2)."""


@dataclass(frozen=True)
class Gates:
    fail_under: float | None = None
    min_pass_rate: float | None = None
    allow_incomplete: bool = False

    @property
    def active(self) -> bool:
        return self.fail_under is not None or self.min_pass_rate is not None

    def as_dict(self) -> GateLimits:
        return {"fail_under": self.fail_under, "min_pass_rate": self.min_pass_rate,
                "allow_incomplete": self.allow_incomplete}


def parse_score(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise GateError(f"--fail-under: '{text}' is not a number") from None
    if not math.isfinite(value):
        raise GateError(f"--fail-under: '{text}' is not a finite number")
    return value


def parse_rate(text: str | None) -> float | None:
    """A rate between 0 and 1, or a percentage such as `80%`."""
    if text is None:
        return None
    raw = text.strip()
    scale = 100.0 if raw.endswith("%") else 1.0
    try:
        value = float(raw.rstrip("%")) / scale
    except ValueError:
        raise GateError(f"--min-pass-rate: '{text}' is not a rate (use 0.8 or 80%)") from None
    if not 0.0 <= value <= 1.0 or math.isnan(value):
        raise GateError(f"--min-pass-rate: '{text}' is outside 0..1 (use 0.8 or 80%)")
    return value


def _score_gate(where: str, group: Group, fail_under: float) -> list[str]:
    """--fail-under on one config x model. A mean over only the scored Grades is a mean over
    a subset chosen by the outcome (a failed Check often leaves no score), so a group
    whose Grades are not all scored trips it too (fail closed)."""
    mean = group.mean
    if mean is None or mean < fail_under:
        shown = "no score" if mean is None else f"mean score {mean:.4g}"
        return [f"{where}: {shown} over {group.n} run(s) is below --fail-under {fail_under:g}"]
    if not group.complete:
        return [f"{where}: only {len(group.scores)} of {group.n} Grade(s) have a score, so "
                f"its mean {mean:.4g} is not over every Run; --fail-under needs a score on "
                "every Grade (gate on --min-pass-rate instead)"]
    return []


def check(gates: Gates, reports: list[EvalReport]) -> list[str]:
    """One message per config x model below a gate; empty when every gate holds."""
    if not gates.active:
        return []
    problems: list[str] = []
    for report in reports:
        if not gates.allow_incomplete:
            problems += report_reasons(report.name, report.collected, report.version)
        for group in report.groups:
            where = f"{report.name}: {group.label}"
            if gates.fail_under is not None:
                problems += _score_gate(where, group, gates.fail_under)
            rate = group.pass_rate
            if gates.min_pass_rate is not None and rate < gates.min_pass_rate:
                problems.append(f"{where}: pass rate {rate:.1%} ({group.passed}/{group.n}) is "
                                f"below --min-pass-rate {gates.min_pass_rate:.1%}")
    if not any(r.groups for r in reports):
        problems.append("no graded Runs to check the gates against")
    return problems
