"""Why a task flipped: which Checks changed their verdict between the sides, and the first
failing Check (with its notes) on the failing side.

Over the flip's counted Runs on each side, a Check **changed** when its verdicts differ: its
shares of pass, fail, error and skip (`exact` passed 3 of 3 Grades in A and 0 of 3 in B,
or was not in A's Grades and failed in B's); Checks are known by
their label (smevals.report.checks). The **reason** is read from the Run `shown` picks on
the failing side (a Run that fails there): its first Check that failed or gave no
verdict, in the grader's order, with the Check's notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from smevals.diff.compare import Flip, shown
from smevals.report.checks import CheckRow, check_rows, labelled, verdict

NOTES_ROOM = 100    # characters of the notes in Markdown (JSON has them whole)


@dataclass(frozen=True)
class Move:
    """A Check whose verdicts changed between the sides."""

    check: str
    a: CheckRow
    b: CheckRow

    @property
    def text(self) -> str:
        """`exact pass 3/3 -> 0/3`, or `answered skipped -> pass 1/1` where a side never
        ran the Check (a grader version without it, or `if_task_has`)."""
        a, b = self.a, self.b
        if a.skipped == a.runs or b.skipped == b.runs:
            return f"{self.check} {_side(a)} -> {_side(b)}"
        return f"{self.check} pass {a.passed}/{a.runs} -> {b.passed}/{b.runs}"


@dataclass(frozen=True)
class Reason:
    """The first Check that failed (or gave no verdict) on the failing side's Run."""

    check: str
    side: str                   # "a" or "b"
    verdict: str                # "fail" or "error"
    run_id: str
    grade_id: str
    notes: str

    def as_dict(self) -> dict[str, str]:
        return {"check": self.check, "side": self.side, "verdict": self.verdict,
                "run_id": self.run_id, "grade_id": self.grade_id, "notes": self.notes}


def moves(flip: Flip) -> list[Move]:
    """The Checks whose verdicts differ between A and B (their shares of pass, fail, error
    and skip), in the grader's order (B's, then those only A has)."""
    side_a = {r.check: r for r in check_rows(row.grade.record for row in flip.a)}
    side_b = {r.check: r for r in check_rows(row.grade.record for row in flip.b)}
    empty_a, empty_b = _none(len(flip.a)), _none(len(flip.b))
    names = list(side_b) + [name for name in side_a if name not in side_b]
    out = []
    for name in names:
        a, b = side_a.get(name, empty_a), side_b.get(name, empty_b)
        if _shares(a, b.runs) != _shares(b, a.runs):
            out.append(Move(name, _named(a, name), _named(b, name)))
    return out


def _shares(row: CheckRow, scale: int) -> tuple[int, ...]:
    """The Check's counts of pass, fail, error and skip, times the other side's runs (so
    two sides of different sizes compare by share)."""
    return tuple(n * scale for n in (row.passed, row.failed, row.errors, row.skipped))


def _side(row: CheckRow) -> str:
    return "skipped" if row.skipped == row.runs else f"pass {row.passed}/{row.runs}"


def _none(runs: int) -> CheckRow:
    return CheckRow("", runs, 0, 0, 0, runs)


def _named(row: CheckRow, name: str) -> CheckRow:
    if row.check == name:
        return row
    return CheckRow(name, row.runs, row.passed, row.failed, row.errors, row.skipped, row.scores)


def reason(flip: Flip) -> Reason | None:
    """The first failing Check of the Run shown on the failing side, or None when no Check
    failed there (the Grade failed on its score: a pass threshold)."""
    side = "b" if flip.to_fail else "a"
    row = shown(flip)[1 if flip.to_fail else 0]
    for label, check in labelled(row.grade.record.get("checks")):
        said = verdict(check)
        if said in ("fail", "error"):
            return Reason(label, side, said, row.run.id, row.grade.id,
                          str(check.get("notes") or ""))
    return None


def reason_text(why: Reason | None, flip: Flip) -> str:
    """`check 'exact' failed in B (run 2026...): expected 4` for the Markdown."""
    side = "B" if flip.to_fail else "A"
    if why is None:
        return f"no Check failed in {side}: the Grade failed on its score"
    what = "failed" if why.verdict == "fail" else "had no verdict"
    lines = why.notes.strip().splitlines()
    head = f"check '{why.check}' {what} in {side} (run {why.run_id})"
    if not lines:
        return f"{head} (no notes)"
    notes = lines[0].strip()
    if len(lines) > 1 or len(notes) > NOTES_ROOM:
        notes = notes[:NOTES_ROOM - 3].rstrip() + "..."
    return f"{head}: {notes}"


def flip_lines(flip: Flip) -> list[str]:
    """The Markdown lines under a flip: the Checks that changed, and why."""
    changed = moves(flip)
    listed = ", ".join(m.text for m in changed) if changed else "none"
    return [f"  - Checks changed: {listed}", f"  - Why: {reason_text(reason(flip), flip)}"]


def flip_json(flip: Flip) -> dict[str, Any]:
    """`checks_changed` and `reason` of a flip in the JSON."""
    def counts(row: CheckRow) -> dict[str, int]:
        return {"runs": row.runs, "passed": row.passed, "failed": row.failed,
                "errors": row.errors, "skipped": row.skipped}

    why = reason(flip)
    return {"checks_changed": [{"check": m.check, "a": counts(m.a), "b": counts(m.b)}
                               for m in moves(flip)],
            "reason": why.as_dict() if why else None}
