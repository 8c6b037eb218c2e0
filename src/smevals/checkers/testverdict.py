"""The `command` checker's verdict from what its run left: the process's outcome and the
tests' figures (a report, else a printed summary). It passes only when the command exited 0
and its own figures agree: every test that ran passed, at least one ran, and as many ran as
expected (checkers/defined.py, or `expect_tests`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from smevals.checkers.base import CheckResult
from smevals.checkers.program import failure
from smevals.checkers.testcounts import Counts
from smevals.proc.sandbox import Outcome


@dataclass
class Figures:
    """What the run's tests came to: `counts` (from its report, else its printed summary),
    or `problem` (a broken report, or none where one was due); `expected`: how many tests
    should have run and by whose word (`collected` in a clean tree, or `expect_tests`)."""

    counts: Counts | None
    problem: str | None = None
    expected: tuple[int, str] | None = None


def decode(data: bytes) -> str:
    return bytes(data).decode("utf-8", "replace").replace("\r\n", "\n")


def verdict(outcome: Outcome, figures: Figures, timeout: float, cap: int) -> CheckResult:
    counts = figures.counts
    details: dict[str, Any] = {"exit_code": outcome.exit_code, "sandbox": outcome.sandbox}
    if counts is not None:
        details["tests"] = {"passed": counts.passed, "total": counts.total,
                            "from": counts.source}
        if counts.skipped:
            details["tests"]["skipped"] = counts.skipped
        if counts.failing:
            details["failing"] = counts.failing
    if figures.expected is not None:
        details.setdefault("tests", {})["expected"] = figures.expected[0]
        details["tests"]["expected_from"] = figures.expected[1]
    problem = _problems(outcome, figures, timeout, cap)
    score = _score(counts, figures.expected)
    if problem is None:
        return CheckResult(ok=True, score=1.0 if score is None else score, details=details)
    for name in ("stdout", "stderr"):       # their ends, beside the files kept in full
        text = decode(getattr(outcome, name)).strip()
        if text:
            details[name] = text if len(text) <= 500 else "…" + text[-500:]
    return CheckResult(ok=False, score=0.0 if score is None else score, notes=problem,
                       details=details)


def _score(counts: Counts | None, expected: tuple[int, str] | None) -> float | None:
    """passed / total, a test that should have run and did not counting as failed."""
    if counts is None:
        return None
    total = max(counts.total, (expected[0] - counts.skipped) if expected else 0)
    return counts.passed / total if total else None


def _problems(outcome: Outcome, figures: Figures, timeout: float, cap: int) -> str | None:
    said = []
    counts = figures.counts
    failed = counts.total - counts.passed if counts is not None else 0
    process = outcome.error or failure(outcome, timeout, cap, "command")
    if process:
        said.append(process + (f": {_failed(counts)}" if counts and failed else ""))
    elif counts and failed:
        said.append(f"{_failed(counts)}, though the command exited 0")
    if figures.problem:
        said.append(figures.problem)
    elif counts is not None and counts.total == 0:
        said.append(f"no test ran ({counts.skipped} skipped)" if counts.skipped
                    else "no test ran")
    expected = figures.expected
    if expected is not None and not figures.problem and (counts is None
                                                         or counts.ran < expected[0]):
        ran = "no test figures (no report, no summary)" if counts is None \
            else f"{counts.ran} test(s) ran"
        whose = "the hidden files define" if expected[1] == "collected" else "expect_tests is"
        said.append(f"{ran}, {whose} {expected[0]}")
    return "; ".join(said) or None


def _failed(counts: Counts) -> str:
    text = f"{counts.total - counts.passed} of {counts.total} tests failed"
    if counts.failing:
        more = ", ..." if len(counts.failing) > 5 else ""
        text += f" ({', '.join(counts.failing[:5])}{more})"
    return text
