"""Repeats: tasks with several graded Runs for one config x model.

Each such task (a "cell") is classified stable pass, stable fail or flaky, and pass@k and
pass^k are estimated per cell and averaged over the cells with at least k Runs.
Cells with a single Run are not repeats and are left out of this section.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from smevals import stats
from smevals.report.summary import Group, by_task


@dataclass(frozen=True)
class Cell:
    task: str
    n: int
    passed: int
    kind: str            # stable_pass / stable_fail / flaky


@dataclass
class Repeats:
    config: str
    model: str
    cells: list[Cell] = field(default_factory=list)

    def count(self, kind: str) -> int:
        return sum(1 for c in self.cells if c.kind == kind)

    @property
    def flaky(self) -> list[Cell]:
        return [c for c in self.cells if c.kind == "flaky"]

    @property
    def max_k(self) -> int:
        return max(c.n for c in self.cells)

    @property
    def min_n(self) -> int:
        return min(c.n for c in self.cells)

    def at_k(self, k: int) -> tuple[float, float, int]:
        """(mean pass@k, mean pass^k, cells with at least k Runs). Cells with the same Runs
        and passes have the same estimates: each is computed once, then repeated."""
        at: list[float] = []
        hat: list[float] = []
        for (n, passed), cells in self.shapes.items():
            if n >= k:
                at += [stats.pass_at_k(n, passed, k)] * cells
                hat += [stats.pass_hat_k(n, passed, k)] * cells
        return (stats.mean(at) or 0.0, stats.mean(hat) or 0.0, len(at))

    @cached_property
    def shapes(self) -> dict[tuple[int, int], int]:
        """How many cells have each (Runs, passes)."""
        return dict(Counter((c.n, c.passed) for c in self.cells))

    @cached_property
    def rows(self) -> list[tuple[int, float, float, int]]:
        return [(k, *self.at_k(k)) for k in range(1, self.max_k + 1)]

    def table(self) -> list[tuple[int, float, float, int]]:
        """(k, pass@k, pass^k, cells) for k = 1 .. the most Runs any cell has."""
        return self.rows


def repeats(groups: list[Group]) -> list[Repeats]:
    """The repeats of every group that has a task with two or more Runs, in group order."""
    out = []
    for group in groups:
        cells = [_cell(task) for task in by_task(group) if task.n >= 2]
        if cells:
            out.append(Repeats(group.config, group.model, cells))
    return out


def _cell(task: Group) -> Cell:
    return Cell(task.task, task.n, task.passed, stats.classify_counts(task.n, task.passed))
