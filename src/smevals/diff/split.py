"""A config x model's change split into what the grader did and what the evidence did,
when the two sides count Grades of different grader versions (DESIGN principle 20: "a
change is explained, not just measured").

- **The grader effect**: the same Runs, A's, graded by A's grader and by B's. Each Run is
  paired with itself: the score change is the mean of the per-Run differences with a paired
  bootstrap interval (the normal one above a thousand Runs: `twosample`), the pass/fail
  moves are tested by McNemar's exact test.
- **The evidence effect**: A's Runs and B's Runs, both graded by B's grader (new samples,
  a new model version, changed Tasks). Different Runs, so unpaired: the difference of the
  means with an unpaired bootstrap interval, the pass rates by Fisher's exact test
  (`smevals.diff.twosample`).
- **The total**: B's own figures against A's own (B's mean minus A's, B's pass rate minus A's).

When every Run of A has a verdict of B's grader, grader + evidence = total, for the mean
score and the pass rate alike. A Run of A without one (`regraded.verdicts_under_b` says
where verdicts come from) is in neither part, and counted (`unsplit`).

Pure: rows and verdicts in, figures and words out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from smevals import stats
from smevals.diff.twosample import fisher_exact, paired_interval, unpaired_interval
from smevals.report.rows import Row

Verdict = tuple[float | None, bool]         # (score, passed) of one Run under one grader


@dataclass(frozen=True)
class Part:
    """One part of a change (B - A): the mean score's, with its interval (None unless every
    Grade involved has a score), and the pass rate's, with its p-value."""

    mean_delta: float | None
    ci: tuple[float, float] | None
    pass_delta: float
    p: float

    def score_significant(self) -> bool:
        return self.ci is not None and (self.ci[0] > 0 or self.ci[1] < 0)

    def pass_significant(self, alpha: float) -> bool:
        return stats.significant(self.p, alpha) and self.pass_delta != 0

    def significant(self, alpha: float) -> bool:
        return self.score_significant() or self.pass_significant(alpha)

    def moves(self, alpha: float) -> tuple[bool, bool]:
        """(a significant drop, a significant gain), in the score or the pass rate."""
        ci, passing = self.ci, self.pass_significant(alpha)
        drop = (self.score_significant() and ci is not None and ci[1] < 0) or \
            (passing and self.pass_delta < 0)
        gain = (self.score_significant() and ci is not None and ci[0] > 0) or \
            (passing and self.pass_delta > 0)
        return drop, gain


@dataclass(frozen=True)
class GraderPart(Part):
    runs: int                   # A's Runs graded by both graders
    regressions: int            # Runs pass -> fail
    fixes: int                  # Runs fail -> pass
    rescored: int               # of them, B's verdict re-scored from A's Grade (no B Grade)


@dataclass(frozen=True)
class EvidencePart(Part):
    runs_a: int                 # A's Runs, graded by B's grader
    runs_b: int                 # B's Runs
    same_runs: bool             # the very same Runs: no other evidence at all


@dataclass(frozen=True)
class Split:
    change: str                 # what changed in the grader, in words ("mean → min")
    grader: GraderPart
    evidence: EvidencePart
    total_mean: float | None    # B's mean - A's mean (None unless every Grade has a score)
    total_pass: float           # B's pass rate - A's
    unsplit: int                # A's Runs without a verdict of B's grader: in neither part
    runs_a: int                 # A's Runs

    def carried_by(self, alpha: float) -> str:
        """Which part carries the change: grader, evidence, both or neither."""
        grader, evidence = self.grader.significant(alpha), self.evidence.significant(alpha)
        if grader and evidence:
            return "both"
        return "grader" if grader else "evidence" if evidence else "neither"


def split(a_rows: Sequence[Row], b_rows: Sequence[Row], under_b: Mapping[str, Verdict],
          rescored: frozenset[str], change: str, alpha: float) -> Split | None:
    """The split of one config x model: `under_b` holds B's verdict of A's Runs (by Run
    rel); None when no Run of A has one (nothing to pair)."""
    same = [r for r in a_rows if r.run.rel in under_b]
    if not same:
        return None
    before = [(r.score, r.passed) for r in same]
    after = [under_b[r.run.rel] for r in same]
    theirs = [(r.score, r.passed) for r in b_rows]
    same_runs = {r.run.rel for r in same} == {r.run.rel for r in b_rows}
    grader = _grader(before, after, sum(r.run.rel in rescored for r in same), alpha)
    evidence = _evidence(after, theirs, same_runs, alpha)
    mean_a, mean_b = _mean([(r.score, r.passed) for r in a_rows]), _mean(theirs)
    total = None if mean_a is None or mean_b is None else mean_b - mean_a
    return Split(change, grader, evidence, total,
                 _rate(theirs) - _rate([(r.score, r.passed) for r in a_rows]),
                 len(a_rows) - len(same), len(a_rows))


def _grader(before: list[Verdict], after: list[Verdict], rescored: int,
            alpha: float) -> GraderPart:
    deltas = [b - a for (a, _), (b, _) in zip(before, after, strict=True)
              if a is not None and b is not None]
    complete = len(deltas) == len(before)
    regressions, fixes = stats.discordant_counts(
        (was, now) for (_, was), (_, now) in zip(before, after, strict=True))
    ci = paired_interval(deltas, 1 - alpha) if complete else None
    return GraderPart(stats.mean(deltas) if complete else None, ci,
                      _rate(after) - _rate(before), stats.mcnemar_exact(regressions, fixes),
                      len(before), regressions, fixes, rescored)


def _evidence(a: list[Verdict], b: list[Verdict], same_runs: bool,
              alpha: float) -> EvidencePart:
    scores_a = [s for s, _ in a if s is not None]
    scores_b = [s for s, _ in b if s is not None]
    complete = len(scores_a) == len(a) and len(scores_b) == len(b)
    passed_a, passed_b = sum(p for _, p in a), sum(p for _, p in b)
    if same_runs:
        zero = (0.0, 0.0) if complete else None
        return EvidencePart(0.0 if complete else None, zero, 0.0, 1.0, len(a), len(b), True)
    mean_a, mean_b = stats.mean(scores_a), stats.mean(scores_b)
    delta = mean_b - mean_a if complete and mean_a is not None and mean_b is not None else None
    ci = unpaired_interval(scores_a, scores_b, 1 - alpha) if delta is not None else None
    return EvidencePart(delta, ci, _rate(b) - _rate(a),
                        fisher_exact(passed_a, len(a), passed_b, len(b)), len(a), len(b),
                        False)


def _mean(verdicts: list[Verdict]) -> float | None:
    scores = [s for s, _ in verdicts if s is not None]
    return stats.mean(scores) if verdicts and len(scores) == len(verdicts) else None


def _rate(verdicts: list[Verdict]) -> float:
    return sum(p for _, p in verdicts) / len(verdicts) if verdicts else 0.0


# --- words ------------------------------------------------------------------------------


def word(moves: tuple[bool, bool]) -> str:
    """`significant drop`, `significant gain`, both, or `no significant change`."""
    drop, gain = moves
    if drop and gain:
        return "mixed: significant drop and gain"
    return "significant drop" if drop else "significant gain" if gain else \
        "no significant change"


def sentence(s: Split, alpha: float) -> str:
    """Which part carries the change, and whether each is significant: `score -0.27: all
    from the grader (-0.27 on the same 15 Runs, mean → min); pass rate unchanged; no other
    evidence (the same Runs on both sides)`."""
    words = _Words(s)
    parts = []
    if s.total_mean is not None and s.grader.mean_delta is not None \
            and s.evidence.mean_delta is not None:
        parts.append(words.part("score", _signed(s.total_mean), _signed(s.grader.mean_delta),
                                _signed(s.evidence.mean_delta), s.grader.score_significant(),
                                s.evidence.score_significant()))
    if s.grader.pass_delta == 0 and s.evidence.pass_delta == 0 and s.total_pass == 0:
        parts.append("pass rate unchanged")
    else:
        parts.append(words.part("pass rate", _points(s.total_pass), _points(s.grader.pass_delta),
                                _points(s.evidence.pass_delta), s.grader.pass_significant(alpha),
                                s.evidence.pass_significant(alpha)))
    if s.evidence.same_runs:
        parts.append("no other evidence (the same Runs on both sides)")
    if s.unsplit:
        parts.append(f"{s.unsplit} of A's {s.runs_a} Runs have no verdict of B's grader and "
                     "are in neither part")
    return "; ".join(parts)


class _Words:
    """The clauses of one sentence: the grader's change is named once, at its first use."""

    def __init__(self, s: Split):
        self.s = s
        self.same = "the same Run" if s.grader.runs == 1 else f"the same {s.grader.runs} Runs"
        self.said = False

    def on(self) -> str:
        """`on the same 15 Runs, mean → min` (how many were re-scored and what changed only
        the first time)."""
        if self.said:
            return f"on {self.same}"
        self.said = True
        rescored = self.s.grader.rescored
        how = f" ({rescored} re-scored from A's Grades)" if rescored else ""
        return f"on {self.same}{how}, {self.s.change}"

    def part(self, what: str, total: str, grader: str, evidence: str, by_grader: bool,
             by_evidence: bool) -> str:
        if self.s.evidence.same_runs:
            if by_grader:
                return f"{what} {total}: all from the grader ({grader} {self.on()})"
            return (f"{what} {total}: no significant change (grader effect {grader} "
                    f"{self.on()})")
        if by_grader and by_evidence:
            return (f"{what} {total}: from both the grader ({grader} {self.on()}) and the "
                    f"evidence ({evidence}), each significant")
        if by_grader:
            return (f"{what} {total}: from the grader ({grader} {self.on()}); evidence "
                    f"effect {evidence}, not significant")
        if by_evidence:
            return (f"{what} {total}: from the evidence ({evidence}, significant); grader "
                    f"effect {grader} {self.on()}, not significant")
        return (f"{what} {total}: no significant change (grader effect {grader} {self.on()}; "
                f"evidence effect {evidence})")


def _signed(value: float) -> str:
    return f"{value:+.2f}"


def _points(value: float) -> str:
    return f"{value * 100:+.1f} pts"
