"""Summaries of rows: the config x model leaderboard, metrics, tag shares, scores by task.

Every renderer (Markdown, JSON, CSV, JUnit) and the gates read these, so the numbers agree
across formats. All statistics come from `smevals.stats`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from smevals import stats
from smevals.report.rows import Row, runner_of


@dataclass
class Group:
    """All rows of one key (config x model, or config x model x task)."""

    config: str
    model: str
    rows: list[Row] = field(default_factory=list)
    task: str = ""

    # Computed once, after the rows are complete.

    @property
    def n(self) -> int:
        return len(self.rows)

    @cached_property
    def passed(self) -> int:
        return sum(1 for r in self.rows if r.passed)

    @property
    def failed(self) -> int:
        return self.n - self.passed

    @cached_property
    def scores(self) -> list[float]:
        return [r.score for r in self.rows if r.score is not None]

    @cached_property
    def mean(self) -> float | None:
        return stats.mean(self.scores)

    @cached_property
    def stderr(self) -> float | None:
        return stats.stderr(self.scores)

    @cached_property
    def display(self) -> str:
        return stats.fmt_mean_se(self.scores)

    @property
    def complete(self) -> bool:
        """Every counted Grade has a score: only then is the mean a mean over all Runs (a
        failed Check without a score leaves its Grade unscored, so the unscored Runs are
        mostly the failures)."""
        return len(self.scores) == self.n > 0

    @property
    def score_n(self) -> str:
        """`` when every Run is scored, else ` (n=7 of 15)`."""
        return "" if self.complete or not self.n else f" (n={len(self.scores)} of {self.n})"

    @property
    def score_text(self) -> str:
        """The mean score with its n when not every Run is scored: `1.00 ±0.00 (n=7 of 15)`."""
        return self.display + (self.score_n if self.scores else "")

    @cached_property
    def runners(self) -> list[tuple[str, int]]:
        """(`smevals:codex 0.171.0`, Runs) of each runner version its Runs record (harness
        runners and `smevals:agent`), by name."""
        found: dict[str, int] = {}
        for row in self.rows:
            runner = runner_of(row.run)
            if runner is not None:
                found[runner] = found.get(runner, 0) + 1
        return sorted(found.items())

    @property
    def pass_rate(self) -> float:
        return self.passed / self.n if self.n else 0.0

    @property
    def wilson(self) -> tuple[float, float]:
        return stats.wilson(self.passed, self.n)

    @cached_property
    def tasks(self) -> list[Group]:
        """The rows split by task, in task name order."""
        split: dict[str, Group] = {}
        for row in self.rows:
            task = split.get(row.task)
            if task is None:
                task = split[row.task] = Group(self.config, self.model, task=row.task)
            task.rows.append(row)
        return [split[name] for name in sorted(split)]

    @property
    def label(self) -> str:
        return f"{self.model} ({self.config})"


@dataclass(frozen=True)
class Metric:
    name: str
    kind: str                 # "boolean" (a rate) or "number" (mean and stderr)
    n: int
    values: tuple[float, ...]
    true: int = 0

    @property
    def display(self) -> str:
        if self.kind == "boolean":
            return f"{self.true / self.n:.0%} ({self.true}/{self.n})"
        return stats.fmt_mean_se(self.values)


SCORE = "score"             # the leaderboard ranks by mean score ...
PASS_RATE = "pass_rate"     # ... or by pass rate, when some Grade has no score


def ranked_by(groups: list[Group]) -> str:
    """SCORE when every Grade of every config x model has a score, else PASS_RATE: a mean
    over only the scored Runs is a mean over a subset chosen by the outcome."""
    return SCORE if all(g.complete for g in groups) else PASS_RATE


def _score_key(group: Group) -> tuple[float, str, str]:
    mean = group.mean
    return (-(mean if mean is not None else -1.0), group.model, group.config)


def _pass_key(group: Group) -> tuple[float, str, str]:
    return (-group.pass_rate, group.model, group.config)


def leaderboard(rows: list[Row]) -> list[Group]:
    """config x model groups, best first, ties by model, config: by mean score (unscored
    last) when every Grade has a score, else by pass rate (see `ranked_by`)."""
    groups: dict[tuple[str, str], Group] = {}
    for row in rows:
        key = (row.config, row.model)
        if key not in groups:
            groups[key] = Group(row.config, row.model)
        groups[key].rows.append(row)
    found = list(groups.values())
    return sorted(found, key=_score_key if ranked_by(found) == SCORE else _pass_key)


def ranks(groups: list[Group]) -> list[int]:
    """Competition ranks over what the leaderboard ranks by: the displayed scores (equal
    displays share a rank), or the pass rates (equal rates share a rank: 3/4 and 6/8; a
    division is correctly rounded, so equal fractions give equal floats)."""
    if ranked_by(groups) == SCORE:
        return stats.competition_ranks([g.display for g in groups])
    return stats.competition_ranks([g.pass_rate for g in groups])


def by_task(group: Group) -> list[Group]:
    """The group's rows split by task, in task name order."""
    return group.tasks


def counts_text(n: int, fails: int) -> str:
    """`3 runs, 1 fail` as in the original report."""
    text = f"{n} run" + ("" if n == 1 else "s")
    if fails:
        text += f", {fails} fail" + ("" if fails == 1 else "s")
    return text


def table_cell(text: str) -> str:
    """`text` as one cell of a Markdown table: `|` escaped, on one line."""
    return " ".join(text.replace("|", "\\|").split())


def pass_text(passed: int, n: int) -> str:
    """`67% (2/3), 95% CI [0.21, 0.94]`: the pass rate, its n and its Wilson interval."""
    rate = passed / n if n else 0.0
    return f"{rate:.0%} ({passed}/{n}), 95% CI {stats.fmt_ci(stats.wilson(passed, n))}"


def _numeric(value: object) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and value == value and abs(value) != float("inf"):
        return float(value)
    return None


def _numbers(values: list[Any]) -> tuple[float, ...]:
    """The finite numbers among `values` (booleans as 0 and 1), as floats; plain floats,
    by far the most common, take the quick path."""
    out = []
    for value in values:
        if value.__class__ is float:
            if value - value == 0.0:            # neither infinite nor NaN
                out.append(value)
        else:
            number = _numeric(value)
            if number is not None:
                out.append(number)
    return tuple(out)


def metrics(rows: list[Row]) -> list[Metric]:
    """Every metric key (sorted): all-boolean values as a rate, numbers as mean and stderr.

    A row without the key does not count towards it; values that are neither numbers nor
    booleans are ignored, and a key with no such values is left out.
    """
    found: dict[str, list[Any]] = {}
    for row in rows:
        values: Any = row.grade.record.get("metrics")
        if values and values.__class__ is dict:
            for key, value in values.items():
                if key in found:
                    found[key].append(value)
                else:
                    found[str(key)] = [value]
    out = []
    for name in sorted(found):
        values = found[name]
        if all(v.__class__ is bool for v in values):
            out.append(Metric(name, "boolean", len(values), tuple(map(float, values)),
                              sum(values)))
            continue
        numbers = _numbers(values)
        if numbers:
            out.append(Metric(name, "number", len(numbers), numbers))
    return out


def tag_counts(rows: list[Row]) -> list[tuple[str, int]]:
    """(tag, rows having it), most common first, ties by name."""
    counter: dict[str, int] = {}
    for row in rows:
        tags = row.grade.record.get("tags")
        if tags:
            for tag in {str(t) for t in tags}:
                counter[tag] = counter.get(tag, 0) + 1
    return sorted(counter.items(), key=lambda item: (-item[1], item[0]))
