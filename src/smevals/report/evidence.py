"""Missing evidence: per config x model, the matching Runs a report or a diff leaves out
because they have no Grade of the chosen grader version (ungraded), their Grade is an
error (errored), or they were made from older inputs (stale).

Gates never pass on missing evidence: a report gate fails while current Runs of a
config x model are ungraded or errored, and a diff gate fails when side B has fewer
graded Runs of a config x model than side A had and some of B's are ungraded or errored
(`--allow-incomplete` lifts both)."""

from __future__ import annotations

from dataclasses import dataclass

from smevals.report.rows import ERRORED, OLDER, STALE, UNGRADED, Collected

Pair = tuple[str, str]          # (config, model)


@dataclass
class LeftOut:
    """Runs of one config x model left out of the counts, by why."""

    ungraded: int = 0           # no Grade of the chosen version (and answer key)
    answer_key: int = 0         # of those: graded by that version, with an older answer key
    errored: int = 0            # their Grade is an error (no verdict)
    stale: int = 0              # made from an older task, config or runner

    @property
    def missing(self) -> int:
        """Runs that count once graded: ungraded plus errored."""
        return self.ungraded + self.errored

    def as_dict(self) -> dict[str, int]:
        return {"ungraded": self.ungraded, "errored": self.errored, "stale": self.stale}


def left_out(collected: Collected, version: str) -> dict[Pair, LeftOut]:
    """What each config x model left out; `version` is the grader version (or prefix) whose
    Grades count, to tell an older answer key from an older grader version."""
    out: dict[Pair, LeftOut] = {}
    for item in collected.excluded:
        if item.reason not in (UNGRADED, OLDER, ERRORED, STALE):
            continue
        counts = out.setdefault((item.config, item.model), LeftOut())
        if item.reason == ERRORED:
            counts.errored += 1
        elif item.reason == STALE:
            counts.stale += 1
        else:
            counts.ungraded += 1
            grade = item.grade
            if grade is not None and version and str(
                    grade.record.get("grader", {}).get("version", "")).startswith(version):
                counts.answer_key += 1
    return out


def _runs(n: int) -> str:
    return f"{n} Run" + ("" if n == 1 else "s")


def missing_texts(counts: LeftOut, version: str, whose: str) -> list[str]:
    """`36 Runs of B have no Grade of version X; run `smevals grade``, and the same for
    errored Grades; `whose` is " of B" or ""."""
    texts = []
    if counts.ungraded:
        verb = "has" if counts.ungraded == 1 else "have"
        key = (" for its current answer key" if counts.ungraded == 1 else
               " for their current answer keys") if counts.answer_key == counts.ungraded else ""
        texts.append(f"{_runs(counts.ungraded)}{whose} {verb} no Grade of version "
                     f"{version}{key}; run `smevals grade`")
    if counts.errored:
        verb = "has" if counts.errored == 1 else "have"
        texts.append(f"{_runs(counts.errored)}{whose} {verb} an errored Grade (no verdict from "
                     "a judge or webhook); run `smevals grade` to try again")
    return texts


def report_reasons(name: str, collected: Collected, version: str) -> list[str]:
    """Why a report's gates cannot be trusted: current Runs of a config x model that are
    ungraded or errored."""
    reasons = []
    for (config, model), counts in sorted(left_out(collected, version).items()):
        reasons += [f"incomplete evidence: {name}: {model} ({config}): {text}"
                    for text in missing_texts(counts, version, "")]
    return reasons
