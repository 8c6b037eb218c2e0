"""Compare two sides of one Eval (two revisions, or two grader versions on the same Runs).

Pure: it takes the rows each side's report would count and returns, per config x model,
the mean score and pass rate on each side with their deltas and paired statistics over
the tasks present on both sides; the tasks that flipped; what was added or removed.

Per task, a side's score is the mean score of the task's Runs there, and whether the task
passes follows `--task-pass` (`smevals.report.taskpass`; by default when more than half of
its Runs pass: 1 of 2 is not a pass). Scores are compared only when every Grade of the
config x model has one on both sides: a mean over only the scored Runs is a mean over a
subset chosen by the outcome (see `Group.complete`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from smevals import stats
from smevals.diff.split import Split
from smevals.diff.split import word as split_word
from smevals.report.document import EvalReport
from smevals.report.evidence import LeftOut, Pair, left_out, missing_texts
from smevals.report.rows import ERRORED, Row, cell_of
from smevals.report.summary import Group, by_task
from smevals.report.taskpass import DEFAULT, task_passes
from smevals.store.read import Obj
from smevals.store.records import RunBrief

ITERATIONS = 10_000
SEED = 0


@dataclass(frozen=True)
class Paired:
    """Paired statistics of one config x model over the tasks present on both sides."""

    tasks: int                                 # tasks with graded Runs on both sides
    scored: int                                # of those, tasks with a score on both sides
    mean_delta: float | None                   # mean of per-task score deltas (B - A)
    ci: tuple[float, float] | None             # paired bootstrap interval of mean_delta
    regressions: int                           # tasks pass -> fail
    fixes: int                                 # tasks fail -> pass
    p: float                                   # exact McNemar p-value

    def score_significant(self) -> bool:
        return self.ci is not None and (self.ci[0] > 0 or self.ci[1] < 0)

    def pass_significant(self, alpha: float) -> bool:
        return stats.significant(self.p, alpha)


@dataclass
class GroupDiff:
    config: str
    model: str
    a: Group | None
    b: Group | None
    paired: Paired | None = None
    split: Split | None = None      # the grader's part and the evidence's (diff/split.py)
    unsplit: str | None = None      # why a change under another grader version has none

    @property
    def status(self) -> str:
        return "both" if self.a and self.b else ("added" if self.b else "removed")

    @property
    def scores_complete(self) -> bool:
        """Every Grade on both sides has a score: only then are scores compared."""
        return bool(self.a and self.b and self.a.complete and self.b.complete)

    @property
    def mean_delta(self) -> float | None:
        """The unpaired difference of the two means (B - A), when scores are complete."""
        a, b = self.a, self.b
        if not (a and b and self.scores_complete) or a.mean is None or b.mean is None:
            return None
        return b.mean - a.mean

    @property
    def pass_delta(self) -> float | None:
        return self.b.pass_rate - self.a.pass_rate if self.a and self.b else None

    def worse(self, alpha: float) -> bool:
        """A significant drop: in mean score (interval below 0) or pass/fail (McNemar). When
        the grader version changed and the change is split, only the evidence's part can
        be a drop: what the grader did to the same Runs is not the model's."""
        if self.split is not None:
            return self.split.evidence.moves(alpha)[0]
        p = self.paired
        if p is None:
            return False
        return ((p.score_significant() and p.ci is not None and p.ci[1] < 0)
                or (p.pass_significant(alpha) and p.regressions > p.fixes))

    def better(self, alpha: float) -> bool:
        if self.split is not None:
            return self.split.evidence.moves(alpha)[1]
        p = self.paired
        if p is None:
            return False
        return ((p.score_significant() and p.ci is not None and p.ci[0] > 0)
                or (p.pass_significant(alpha) and p.fixes > p.regressions))

    def verdict(self, alpha: float) -> str:
        """`significant drop`, ...; with a split, each part's verdict."""
        if self.status != "both":
            return "only in B" if self.status == "added" else "only in A"
        if self.split is not None:
            return (f"grader: {split_word(self.split.grader.moves(alpha))}; "
                    f"evidence: {split_word(self.split.evidence.moves(alpha))}")
        said = split_word((self.worse(alpha), self.better(alpha)))
        return said + ("; grader changed too, not split" if self.unsplit else "")


@dataclass(frozen=True)
class Flip:
    config: str
    model: str
    task: str
    to_fail: bool                   # pass -> fail (else fail -> pass)
    regraded: bool                  # the same Runs on both sides: only the Grades differ
    a: tuple[Row, ...]
    b: tuple[Row, ...]


@dataclass
class Changes:
    runs: list[str] = field(default_factory=list)       # Run ids
    tasks: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    configs: list[str] = field(default_factory=list)
    # the Runs counted per config x model: [{"config", "model", "runs"}], by config, model
    runs_by_pair: list[dict[str, str | int]] = field(default_factory=list)
    # Runs of this side that the other side holds damaged (left out there, not removed)
    damaged: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        return not (self.runs or self.tasks or self.models or self.configs)


@dataclass
class EvalDiff:
    name: str
    grader: str
    version_a: str
    version_b: str
    same_runs: bool                 # both sides count exactly the same Runs
    counted: int                    # Runs counted on side B
    groups: list[GroupDiff]
    flips: list[Flip]
    added: Changes
    removed: Changes
    alpha: float
    status: str = "both"            # "added" / "removed": the Eval is on one side only
    stale_a: dict[str, int] = field(default_factory=dict)   # stale Runs left out, by reason
    stale_b: dict[str, int] = field(default_factory=dict)
    errored: tuple[int, int] = (0, 0)   # Runs left out on A and B: their Grade is an error
    changed_files: list[str] = field(default_factory=list)  # why the grader version changed
    left_a: dict[Pair, LeftOut] = field(default_factory=dict)   # per config x model: Runs
    left_b: dict[Pair, LeftOut] = field(default_factory=dict)   # ungraded, errored, stale
    task_pass: str = DEFAULT        # the rule of a task's verdict on a side

    @property
    def version_changed(self) -> bool:
        return self.version_a != self.version_b

    @property
    def regressions(self) -> list[Flip]:
        return [f for f in self.flips if f.to_fail]

    @property
    def fixes(self) -> list[Flip]:
        return [f for f in self.flips if not f.to_fail]

    def worse(self) -> list[GroupDiff]:
        return [g for g in self.groups if g.worse(self.alpha)]


def compare(a: EvalReport, b: EvalReport, alpha: float = 0.05,
            task_pass: str = DEFAULT) -> EvalDiff:
    groups_a = {(g.config, g.model): g for g in a.groups}
    groups_b = {(g.config, g.model): g for g in b.groups}
    keys = sorted(groups_a.keys() | groups_b.keys())
    diffs, flips = [], []
    for key in keys:
        diff = GroupDiff(*key, groups_a.get(key), groups_b.get(key))
        if diff.a and diff.b:
            diff.paired, found = _paired(diff.a, diff.b, alpha, task_pass)
            flips.extend(found)
        diffs.append(diff)
    rels_a = {r.run.rel for r in a.collected.rows}
    rels_b = {r.run.rel for r in b.collected.rows}
    added, removed = changes(a, b)
    status = "both" if a.present and b.present else ("added" if b.present else "removed")
    return EvalDiff(b.name, b.grader or a.grader, a.version, b.version,
                    bool(rels_a) and rels_a == rels_b, len(rels_b), diffs, flips, added,
                    removed, alpha, status, dict(a.stale), dict(b.stale),
                    (a.collected.count(ERRORED), b.collected.count(ERRORED)),
                    changed_files(a, b), left_out(a.collected, a.version),
                    left_out(b.collected, b.version), task_pass)


def changed_files(a: EvalReport, b: EvalReport) -> list[str]:
    """The files (relative to the Eval) whose change made the current grader version differ
    between the sides; empty when it did not, or when a side has no current version."""
    if a.version == b.version or not a.files or not b.files:
        return []
    return sorted(k for k in a.files.keys() | b.files.keys() if a.files.get(k) != b.files.get(k))


def _paired(a: Group, b: Group, alpha: float, rule: str) -> tuple[Paired, list[Flip]]:
    tasks_a = {t.task: t for t in by_task(a)}
    tasks_b = {t.task: t for t in by_task(b)}
    both = stats.paired(tasks_a, tasks_b)             # in task name order
    complete = a.complete and b.complete
    deltas = [tb.mean - ta.mean for ta, tb in both
              if complete and ta.mean is not None and tb.mean is not None]
    outcomes = [(task_passes(ta.rows, rule), task_passes(tb.rows, rule)) for ta, tb in both]
    regressions, fixes = stats.discordant_counts(outcomes)
    ci = stats.paired_bootstrap(deltas, iterations=ITERATIONS, seed=SEED, level=1 - alpha)
    paired = Paired(len(both), len(deltas), stats.mean(deltas), ci, regressions, fixes,
                    stats.mcnemar_exact(regressions, fixes))
    flips = [_flip(ta, tb, was) for (ta, tb), (was, now) in zip(both, outcomes, strict=True)
             if was != now]
    return paired, flips


def _flip(ta: Group, tb: Group, was: bool) -> Flip:
    same = {r.run.rel for r in ta.rows} == {r.run.rel for r in tb.rows}
    return Flip(ta.config, ta.model, ta.task, was, same, tuple(ta.rows), tuple(tb.rows))


def changes(a: EvalReport, b: EvalReport) -> tuple[Changes, Changes]:
    """What B has that A has not (added) and the reverse (removed): Runs, over every Run
    matching the filters (failed and stale ones included); tasks, models and configs, over
    the Runs whose task and config the side's Eval still defines (a deleted task is a
    removed task even though its Runs stay in the store). A Run that the other side holds
    damaged is neither: it is listed as damaged there, and its task, model and config count
    as present there."""
    runs_a = {r.rel: r for r in a.collected.runs}
    runs_b = {r.rel: r for r in b.collected.runs}
    cells_a, cells_b = _defined_cells(a), _defined_cells(b)
    out = []
    for mine, theirs, cells, other, there in ((runs_b, runs_a, cells_b, cells_a, a),
                                              (runs_a, runs_b, cells_a, cells_b, b)):
        broken = {str(d.get("path")) for d in there.damaged} & mine.keys()
        new = mine.keys() - theirs.keys() - broken
        change = Changes(runs=sorted(mine[rel].id for rel in new),
                         runs_by_pair=_by_pair([mine[rel] for rel in new]),
                         damaged=sorted(mine[rel].id for rel in broken))
        other = other + _defined(there, [cell_of(mine[rel]) for rel in broken])
        for index, attr in ((0, "tasks"), (2, "models"), (1, "configs")):
            have = {c[index] for c in other}
            setattr(change, attr, sorted({c[index] for c in cells} - have))
        out.append(change)
    return out[0], out[1]


def _by_pair(runs: list[Obj[RunBrief]]) -> list[dict[str, str | int]]:
    counted: dict[tuple[str, str], int] = {}
    for run in runs:
        _task, config, model = cell_of(run)
        counted[(config, model)] = counted.get((config, model), 0) + 1
    return [{"config": c, "model": m, "runs": n} for (c, m), n in sorted(counted.items())]


def _defined_cells(report: EvalReport) -> list[tuple[str, str, str]]:
    return _defined(report, [cell_of(r) for r in report.collected.runs])


def _defined(report: EvalReport, cells: list[tuple[str, str, str]]
             ) -> list[tuple[str, str, str]]:
    """The cells whose task and config the side's Eval defines."""
    tasks, configs = report.tasks, report.configs
    if tasks is None or configs is None:
        return cells
    return [c for c in cells if c[0] in tasks and c[1] in configs]


def shown(flip: Flip) -> tuple[Row, Row]:
    """The Run to show on each side of a flip: one that passes on the passing side and one
    that fails on the failing side (the first such, in store order)."""
    def first(rows: tuple[Row, ...], passed: bool) -> Row:
        return next((r for r in rows if r.passed == passed), rows[0])
    return first(flip.a, flip.to_fail), first(flip.b, not flip.to_fail)


MODES = ("flip", "significant", "any")


def incomplete_reasons(diffs: list[EvalDiff]) -> list[str]:
    """Why no gate of `diff` can pass: a config x model of which B has fewer graded Runs
    than A had while some of B's Runs are ungraded or errored."""
    reasons = []
    for diff in diffs:
        graded = {(g.config, g.model): (g.a.n if g.a else 0, g.b.n if g.b else 0)
                  for g in diff.groups}
        for pair, counts in sorted(diff.left_b.items()):
            had, has = graded.get(pair, (0, 0))
            if has >= had or not counts.missing:
                continue
            where = (f"{diff.name}: {pair[1]} ({pair[0]}): B counts {has} graded Run(s) "
                     f"where A counted {had}")
            reasons += [f"incomplete evidence: {where}: {text}"
                        for text in missing_texts(counts, diff.version_b, " of B")]
    return reasons


def regression_reasons(diffs: list[EvalDiff], mode: str) -> list[str]:
    """Why --fail-on-regression=MODE trips: pass -> fail flips ("flip"), significant drops
    of a config x model ("significant"), or either ("any")."""
    reasons = []
    for diff in diffs:
        if mode in ("flip", "any"):
            reasons += [f"{diff.name}: {f.task} / {f.config} / {f.model} went pass -> fail"
                        for f in diff.regressions]
        if mode in ("significant", "any"):
            reasons += [f"{diff.name}: {g.model} ({g.config}) dropped significantly "
                        f"(alpha {diff.alpha:g})" for g in diff.worse()]
    return reasons
