"""How Check results combine into a Grade's score and outcome."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from smevals.evaldef.model import Grader
from smevals.store.records import CheckRecord


def grade_score(grader: Grader, results: list[CheckRecord]) -> float | None:
    """The original rule by default (`last`): the last score any Check produced. A failed
    Check that produced no score leaves the Grade unscored, whatever the method."""
    ran = [r for r in results if not r.get("skipped")]
    if any(not r["ok"] and r.get("score") is None for r in ran):
        return None                 # (an errored Check never has a score)
    scored = cast(list[tuple[float, float]],
                  [(r["score"], r.get("_weight", 1.0)) for r in ran if r.get("score") is not None])
    if not scored:
        return None
    if grader.method == "mean":
        return sum(s for s, _ in scored) / len(scored)
    if grader.method == "min":
        return min(s for s, _ in scored)
    if grader.method == "weighted":
        total = sum(w for _, w in scored)
        return sum(s * w for s, w in scored) / total if total else None
    return float(scored[-1][0])


def grade_outcome(grader: Grader, results: list[CheckRecord], score: float | None) -> str:
    """pass, fail, or error: a Check had no verdict (a judge error) and no other Check
    failed. An errored Grade is neither pass nor fail; `smevals grade` retries it."""
    failed = [r for r in results if not r.get("skipped") and not r["ok"]]
    if failed and all(r.get("error") for r in failed):
        return "error"
    if failed:
        return "fail"
    if any(r.get("skipped") for r in results):
        return "fail"
    if score is not None and grader.pass_threshold is not None:
        return "pass" if score >= grader.pass_threshold else "fail"
    return "pass"


NOTES_ROOM = 100    # characters of a failing Check's notes shown on the console


def failure_reason(grader: Grader, results: list[CheckRecord], score: float | None) -> str:
    """One line saying why a Grade failed: the first failing Check's name and the first line
    of its notes (truncated), else the score under the pass threshold."""
    for result in results:
        if result.get("skipped") or result.get("ok"):
            continue
        if result.get("checker") == "none" and result.get("name") == "no Check applied":
            return str(result.get("notes") or "no Check applied")
        name = result.get("name") or result.get("checker")
        lines = str(result.get("notes") or "").strip().splitlines()
        what = "check '{}' had no verdict" if result.get("error") else "failed check '{}'"
        what = what.format(name)
        if not lines:
            return f"{what} (no notes)"
        notes = lines[0].strip()
        if len(lines) > 1 or len(notes) > NOTES_ROOM:
            notes = notes[:NOTES_ROOM - 3].rstrip() + "..."
        return f"{what}: {notes}"
    threshold = grader.pass_threshold
    if score is not None and threshold is not None and score < threshold:
        return f"score {score:.3g} is below the grader's pass_threshold {threshold:g}"
    return ""


def score_note(record: Mapping[str, Any]) -> str:
    """Why a failed Grade's score is above 0, or `` (a pass, or a score of 0 or none).

    A failed Grade's score alone reads like a verdict ("fail 1.00"), so wherever one is
    shown it comes with this reason: a Check failed although the Checks' scores combine to
    more than 0 (with `scoring.method: last`, a later Check's score), or no Check failed and
    the score is under the grader's `pass_threshold`. Reads the brief view too: its
    `checks` are the failed ones."""
    score = record.get("score")
    if record.get("outcome") != "fail" or not isinstance(score, int | float) \
            or isinstance(score, bool) or not score > 0:
        return ""
    checks = record.get("checks")
    failed = [f"'{c.get('name') or c.get('checker')}'" for c in
              (checks if isinstance(checks, list) else [])
              if isinstance(c, dict) and c.get("ok") is False]
    if failed:
        what = "check" if len(failed) == 1 else "checks"
        return f"the Checks' scores, although {what} {', '.join(failed[:3])} failed"
    return BELOW_THRESHOLD


BELOW_THRESHOLD = "below the grader's pass_threshold"


def score_text(record: Mapping[str, Any], fmt: str = "{:g}", reasoned: bool = False) -> str:
    """A Grade's score as shown beside its outcome: `1`, `` (none), or a failed Grade's score
    above 0 with its reason: `1 (the Checks' scores, although check 'contains' failed)`.
    `reasoned`: a line below says when the score is under the pass threshold (the console's
    `failure_reason`), so that reason is not repeated."""
    score = record.get("score")
    if not isinstance(score, int | float) or isinstance(score, bool):
        return ""
    note = score_note(record)
    if reasoned and note == BELOW_THRESHOLD:
        note = ""
    return fmt.format(score) + (f" ({note})" if note else "")
