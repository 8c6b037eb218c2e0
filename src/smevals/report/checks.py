"""Per-Check figures: for each Check of a grader, over a set of Grades, how many passed,
failed, errored or were skipped, its pass rate with a Wilson interval, and its mean score.

A Check is known by its `name`, else its checker; a second unnamed Check of the same
checker in one Grade is `contains #2` (by its order among the Checks in that Grade). A
Check is **skipped** in a Grade that records it as skipped (a `required` Check before it
failed) and in one that does not list it at all (its `if_task_has` key is not in the Task,
or the Grade is of a grader version without it). An **error** is a Check that gave no
verdict (a judge or webhook that did not answer). The pass rate is over the verdicts
(passed + failed): errors and skips are neither. `runs` is the number of Grades looked at.

`check_rows` is the one computation; `report`, `diff` and the site all call it, so the
figures agree everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from smevals import stats
from smevals.report.jsondoc import CheckFigures
from smevals.report.rows import ERRORED, Collected

Pair = tuple[str, str]          # (config, model)


@dataclass(frozen=True, slots=True)
class CheckRow:
    """One Check's figures over a set of Grades."""

    check: str
    runs: int                   # Grades looked at
    passed: int
    failed: int
    errors: int                 # no verdict
    skipped: int                # recorded as skipped, or not in the Grade
    scores: tuple[float, ...] = ()

    @property
    def verdicts(self) -> int:
        return self.passed + self.failed

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.verdicts if self.verdicts else None

    @property
    def wilson(self) -> tuple[float, float]:
        return stats.wilson(self.passed, self.verdicts)

    @property
    def mean(self) -> float | None:
        return stats.mean(self.scores)

    @property
    def mean_says_more(self) -> bool:
        """The mean score tells more than the pass rate: not when every verdict scored 1 on
        a pass and 0 on a failure (the mean is then the pass rate)."""
        if not self.scores:
            return False
        ones = sum(1 for s in self.scores if s == 1.0)
        binary = all(s in (0.0, 1.0) for s in self.scores)
        return not (binary and len(self.scores) == self.verdicts and ones == self.passed)

    @property
    def extras(self) -> list[str]:
        """`mean 0.71 ±0.05`, `1 error`, `2 skipped`: what follows the pass rate (the mean
        only when it says more than the pass rate)."""
        out = [f"mean {stats.fmt_mean_se(self.scores)}"] if self.mean_says_more else []
        if self.errors:
            out.append(f"{self.errors} error" + ("" if self.errors == 1 else "s"))
        if self.skipped:
            out.append(f"{self.skipped} skipped")
        return out

    @property
    def cell(self) -> str:
        """`71% (12/17), mean 0.71 ±0.05, 1 error`: the pass rate over the verdicts and what
        follows it (`-` for the rate when the Check gave no verdict)."""
        rate = f"{self.passed / self.verdicts:.0%} ({self.passed}/{self.verdicts})" \
            if self.verdicts else "-"
        return ", ".join([rate, *self.extras])

    @property
    def line(self) -> str:
        """`pass 71% (12/17), 95% CI [0.47, 0.87], mean 0.71 ±0.05, 1 error`."""
        if not self.verdicts:
            return ", ".join(["no verdict", *self.extras])
        rate = (f"pass {self.passed / self.verdicts:.0%} ({self.passed}/{self.verdicts}), "
                f"95% CI {stats.fmt_ci(self.wilson)}")
        return ", ".join([rate, *self.extras])

    def as_dict(self) -> CheckFigures:
        """The JSON shape (docs/reports.md)."""
        low, high = self.wilson
        return {"check": self.check, "runs": self.runs, "passed": self.passed,
                "failed": self.failed, "errors": self.errors, "skipped": self.skipped,
                "pass_rate": self.pass_rate, "pass_rate_ci": [low, high],
                "scored": len(self.scores), "mean": self.mean,
                "stderr": stats.stderr(self.scores)}


@dataclass
class _Tally:
    seen: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    scores: list[float] = field(default_factory=list)

    def add(self, check: Mapping[str, Any]) -> None:
        self.seen += 1
        if check.get("skipped"):
            self.skipped += 1
            return
        if check.get("error"):
            self.errors += 1
        elif check.get("ok") is True:
            self.passed += 1
        else:
            self.failed += 1
        score = check.get("score")
        if score.__class__ in (int, float) and score - score == 0:     # finite, not a bool
            self.scores.append(float(score))


class _Order:
    """Labels in the order they come, a new one placed right after the label before it in
    its Grade (a linked list: constant time per label, however many a store holds)."""

    def __init__(self) -> None:
        self.next: dict[str, str] = {"": ""}         # "" is the head (and the end)

    def add_after(self, previous: str, label: str) -> None:
        self.next[label] = self.next[previous]
        self.next[previous] = label

    def __iter__(self) -> Iterator[str]:
        label = self.next[""]
        while label:
            yield label
            label = self.next[label]


def check_rows(grades: Iterable[Mapping[str, Any]]) -> list[CheckRow]:
    """Every Check found in the Grade records `grades` (full records or the brief view), in
    the grader's order (as the Grades list them), with its figures over all of them."""
    order = _Order()
    tallies: dict[str, _Tally] = {}
    total = 0
    for record in grades:
        total += 1
        previous = ""
        for label, check in labelled(record.get("checks")):
            tally = tallies.get(label)
            if tally is None:
                tally = tallies[label] = _Tally()
                order.add_after(previous, label)
            tally.add(check)
            previous = label
    return [_row(label, tallies[label], total) for label in order]


def _row(label: str, tally: _Tally, total: int) -> CheckRow:
    return CheckRow(label, total, tally.passed, tally.failed, tally.errors,
                    tally.skipped + total - tally.seen, tuple(tally.scores))


def labelled(checks: object) -> list[tuple[str, Mapping[str, Any]]]:
    """(label, Check) for each Check of a Grade's `checks`: its name, else its checker, with
    ` #2`, ` #3` ... on a repeated label."""
    if checks.__class__ is not list:
        return []
    seen: dict[str, int] = {}
    out: list[tuple[str, Mapping[str, Any]]] = []
    for check in checks:
        if check.__class__ is not dict:
            continue
        base = str(check.get("name") or check.get("checker") or "(no checker)")
        count = seen[base] = seen.get(base, 0) + 1
        out.append((base if count == 1 else f"{base} #{count}", check))
    return out


def verdict(check: Mapping[str, Any]) -> str:
    """`pass`, `fail`, `error` or `skipped`: one Check's verdict in one Grade."""
    if check.get("skipped"):
        return "skipped"
    if check.get("error"):
        return "error"
    return "pass" if check.get("ok") is True else "fail"


def counted_grades(collected: Collected) -> dict[Pair, list[Mapping[str, Any]]]:
    """Per config x model, the Grade records whose Checks are counted: the Grades that count
    for the rows, and the errored Grades left out of them (their Checks ran, and an error
    is a Check's figure)."""
    out: dict[Pair, list[Mapping[str, Any]]] = {}
    for row in collected.rows:
        out.setdefault((row.config, row.model), []).append(row.grade.record)
    for item in collected.excluded:
        if item.reason == ERRORED and item.grade is not None:
            out.setdefault((item.config, item.model), []).append(item.grade.record)
    return out


@dataclass(frozen=True)
class EvalChecks:
    """The per-Check figures of one Eval: over all its counted Grades, and per config x
    model (each list in the order of `overall`)."""

    overall: list[CheckRow]
    pairs: dict[Pair, list[CheckRow]]

    @property
    def several(self) -> bool:
        """More than one Check: only then do the per-Check figures say more than the
        Grades' own."""
        return len(self.overall) > 1


def eval_checks(collected: Collected) -> EvalChecks:
    """Each config x model's Checks once, then their sums (every Grade is read once)."""
    grades = counted_grades(collected)
    pairs = {pair: check_rows(records) for pair, records in grades.items()}
    overall = merged(list(pairs.values()), sum(map(len, grades.values())))
    place = {row.check: i for i, row in enumerate(overall)}
    return EvalChecks(overall, {pair: sorted(rows, key=lambda r: place[r.check])
                                for pair, rows in pairs.items()})


def merged(lists: list[list[CheckRow]], total: int) -> list[CheckRow]:
    """The figures of disjoint sets of `total` Grades in all, added up; Checks in the order
    they come. A Check is skipped wherever it gave neither a verdict nor an error (also in
    a set that does not list it)."""
    order = _Order()
    sums: dict[str, tuple[int, int, int, list[float]]] = {}
    for rows in lists:
        previous = ""
        for row in rows:
            if row.check not in sums:
                sums[row.check] = (0, 0, 0, [])
                order.add_after(previous, row.check)
            passed, failed, errors, scores = sums[row.check]
            scores.extend(row.scores)
            sums[row.check] = (passed + row.passed, failed + row.failed, errors + row.errors,
                               scores)
            previous = row.check
    out = []
    for name in order:
        passed, failed, errors, scores = sums[name]
        out.append(CheckRow(name, total, passed, failed, errors,
                            total - passed - failed - errors, tuple(scores)))
    return out
