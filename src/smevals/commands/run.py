"""`smevals run`: attempt every Task with a Config's Runner, for every model."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from smevals import phases
from smevals.errors import Problem, SmevalsError, SpecError
from smevals.evaldef.model import Eval
from smevals.evaldef.pick import (
    load_evals,
    pick_config,
    pick_grader,
    pick_tasks,
)
from smevals.evaldef.sandbox import grade_sandbox_problems, run_sandbox_problems
from smevals.grade.problems import (
    config_problems,
    grader_problems,
    task_key_warnings,
    workspace_problems,
)
from smevals.proc.launch import ProcessGroups
from smevals.run.attempt import Attempt, Session
from smevals.run.bounds import limits as run_limits
from smevals.run.engine import Interrupted, run_pool
from smevals.run.pipeline import Made, made_later
from smevals.run.plan import Job, PairPlan, check_runnable, plan_jobs, resolve_runner
from smevals.run.prepared import Prepared
from smevals.run.prompts import template_problems
from smevals.run.provenance import provenance
from smevals.run.shard import Shard, shard_plan
from smevals.run.subset import Subset
from smevals.run.topup import TopUp
from smevals.run.writing import writing_to
from smevals.store import folders
from smevals.store.batch import Committer
from smevals.store.read import Store, store_root

if TYPE_CHECKING:
    from smevals.grade.apply import GradeResult
    from smevals.scale import ClusterSpec



@dataclass(frozen=True)
class RunOptions:
    paths: tuple[str, ...]
    models: tuple[str, ...] = ()
    config: str | None = None         # None: the Eval's own (eval.yaml `configs`, else default)
    tasks: tuple[str, ...] = ()
    repeat: int | None = None
    jobs: int = 4
    timeout: float | None = None
    store: str | None = None
    dry_run: bool = False
    grader: str | None = None
    shard: Shard | None = None
    cluster: ClusterSpec | None = None     # attempt on a Dask cluster
    subset: Subset = Subset()      # --limit / --sample: a deterministic subset of each Eval
    configs: tuple[str, ...] = ()  # several Configs (`-c a -c b`), each in turn; else `config`

    def config_names(self, ev: Eval) -> list[str]:
        """The Configs to run `ev` with: `-c` (each in turn), else `config`, else the Eval's
        own set (eval.yaml `configs`, else `default`)."""
        chosen = self.configs or ((self.config,) if self.config else ev.run_configs)
        return list(dict.fromkeys(chosen))


def no_check(grade: object) -> bool:
    """Whether a Grade is the error of no Check applying to its Task."""
    from smevals.grade.apply import is_no_check

    return is_no_check(getattr(grade, "record", None))


class RunUI(Protocol):
    def plan(self, ev: Eval, config: str, pairs: list[PairPlan], jobs: int,
             chosen: str = "") -> None: ...
    def start(self, total: int) -> None: ...
    def done(self, item: Attempt, grade: GradeResult | None) -> None: ...
    def warn(self, problem: Problem) -> None: ...
    def leftover(self, grade: GradeResult) -> None: ...


class Grading(Protocol):
    """How `run -g` grades (commands/grade.py's `AfterRun`, handed in by the CLI, so that
    the two commands never import each other): each Run as soon as it finished, then the
    Runs of the selection an interrupt left without a current Grade."""

    def sealed(self, prep: Prepared, made: Attempt) -> Any: ...
    def leftovers(self, prep: Prepared, jobs: int, graded: frozenset[str],
                  done: Callable[[Any], None]) -> None: ...


@dataclass
class RunSummary:
    ok: int = 0
    failed: int = 0
    graded_fail: int = 0
    graded_error: int = 0           # Grades with outcome error (no verdict from a judge)
    graded_no_check: int = 0        # ... of which no Check of the grader applied
    interrupted: bool = False
    results: list[Made] = field(default_factory=list)


def run_command(opts: RunOptions, ui: RunUI, grading: Grading | None = None) -> RunSummary:
    """Validate everything first, then run; raises SmevalsError before any runner on bad input."""
    phases.started()
    with phases.phase("plan"):
        prepared = [_prepare(ev, name, opts) for ev in load_evals(opts.paths)
                    for name in opts.config_names(ev)]
    summary = RunSummary()
    for prep in prepared:
        for warning in prep.warnings:
            ui.warn(warning)
    for prep in prepared:
        ui.plan(prep.ev, prep.session.config.name, prep.pairs, len(prep.jobs), prep.chosen)
    if opts.dry_run:
        return summary
    for prep in prepared:
        _execute(prep, opts, ui, summary, grading)
        if summary.interrupted:
            break
    return summary


def _prepare(ev: Eval, name: str, opts: RunOptions) -> Prepared:
    config = pick_config(ev, name)
    picked = pick_tasks(ev, opts.tasks)
    tasks = opts.subset.choose(picked)
    problems = (config_problems(config) + template_problems(config, tasks)
                + workspace_problems(tasks))
    grader = pick_grader(ev, opts.grader) if opts.grader else None
    if grader is not None:
        problems.extend(grader_problems(grader, tasks))
    if not problems:        # then whether this machine gives the sandboxes asked for
        problems = run_sandbox_problems(config, tasks) + (
            grade_sandbox_problems(grader, tasks) if grader is not None else [])
    if problems:
        raise SpecError(problems)
    if any(not m.strip() for m in opts.models):
        raise SmevalsError("-m/--model: a model name cannot be empty")
    models = list(dict.fromkeys(opts.models)) or ([config.model] if config.model else [])
    if not models:
        raise SmevalsError(f"{config.path}: config '{config.name}' names no model; "
                           "add `model:` to it or pass -m MODEL")
    runner = resolve_runner(config)
    check_runnable(runner, config)
    store = Store(store_root(ev.path, ev.name, opts.store))
    folders.refuse_links(store.root)            # before any runner starts (exit 2)
    run_limits()                                # a malformed SMEVALS_MAX_RUN_* too
    timeout = opts.timeout if opts.timeout is not None else config.timeout
    session = Session(ev, config, runner, store, timeout, provenance(ev.path, store.root),
                      ProcessGroups(), dict(os.environ))
    planned, pairs = plan_jobs(ev, config, runner, tasks, models, opts.repeat, store)
    jobs, pairs = shard_plan(planned, pairs, opts.shard, config.name)
    warnings = [w for task in tasks for w in task_key_warnings(task)]
    chosen = opts.subset.describe(len(tasks), len(picked)) if opts.subset else ""
    return Prepared(ev, session, jobs, pairs, grader, warnings, chosen)


def _execute(prep: Prepared, opts: RunOptions, ui: RunUI, summary: RunSummary,
             grading: Grading | None) -> None:
    # A shard keeps the sample slots it was given (the shards add up to one plan), so the
    # per-cell claim that renumbers samples by what is on disk serves unsharded runs only.
    topup = TopUp(prep.session.store, prep.session.config.name, opts.repeat) \
        if opts.repeat and opts.shard is None else None
    cancelled = prep.session.groups.cancelled.is_set
    committer = Committer()
    graded = None if grading is None or prep.grader is None else grading

    def grade(made: Attempt) -> Any:
        assert graded is not None
        return graded.sealed(prep, made)

    def later(job: Job) -> Future[Made] | None:
        return made_later(prep.session, job, committer, grade if graded else None)

    def work(job: Job) -> Made | Future[Made] | None:
        if topup is None:
            return later(job)
        # the cell's claim is held until its Run is in place, for others to count it
        return topup.run(job, lambda j: _wait(later(j)), cancelled)

    def done(result: Made) -> None:
        made, grade = result
        summary.results.append(result)
        summary.ok += made.ok
        summary.failed += not made.ok
        summary.graded_fail += bool(grade is not None and getattr(grade, "outcome", "") == "fail")
        summary.graded_error += bool(grade is not None and getattr(grade, "outcome", "") == "error")
        summary.graded_no_check += bool(grade is not None and no_check(grade))
        ui.done(made, grade)

    ui.start(len(prep.jobs))
    try:
        with writing_to(prep.session.store.root):
            if opts.cluster is not None:
                from smevals.scale.runs import run_on_cluster

                run_on_cluster(prep, opts.cluster, done)
            else:
                try:
                    run_pool(prep.jobs, work, opts.jobs, done, prep.session.groups.cancel)
                finally:
                    committer.close()
            if grading and prep.grader and _may_be_left(prep, summary):
                _grade_leftovers(prep, opts, ui, summary, grading)
    except Interrupted:
        summary.interrupted = True


def _wait(future: Future[Made] | None) -> Made | None:
    return None if future is None else future.result()


def _may_be_left(prep: Prepared, summary: RunSummary) -> bool:
    """Whether the selection may hold a successful Run with no current Grade: one made
    before this command (its plan saw it), or one made now and not graded. When neither,
    the store is not read again to look (a first `run -g` of a large Eval)."""
    if any(pair.existing or pair.stale for pair in prep.pairs):
        return True
    return any(made.ok and grade is None for made, grade in summary.results)


def _grade_leftovers(prep: Prepared, opts: RunOptions, ui: RunUI, summary: RunSummary,
                     grading: Grading) -> None:
    """Grade the selection's Runs that an interrupt left without a current Grade."""
    def done(grade: Any) -> None:
        summary.graded_fail += grade.outcome == "fail"
        summary.graded_error += grade.outcome == "error"
        summary.graded_no_check += no_check(grade)
        ui.leftover(grade)

    graded = frozenset(made.written.rel for made, grade in summary.results if grade is not None)
    grading.leftovers(prep, opts.jobs, graded, done)


class _Quiet:
    def plan(self, ev: Eval, config: str, pairs: list[PairPlan], jobs: int,
             chosen: str = "") -> None: ...
    def start(self, total: int) -> None: ...
    def done(self, item: Attempt, grade: object) -> None: ...
    def warn(self, problem: Problem) -> None: ...
    def leftover(self, grade: object) -> None: ...


def record_runs(target: Path, config: str, model: str, store: str | None) -> int:
    """One Run of every Task of the Eval in `target` with `config` and `model`, printing
    nothing: how an importer records the Runs it brings along (exit 2 when one fails)."""
    opts = RunOptions(paths=(str(target),), models=(model,), config=config, repeat=1,
                      store=store)
    summary = run_command(opts, _Quiet())
    if summary.failed or summary.interrupted:
        raise SmevalsError(f"{summary.failed} imported Run(s) could not be recorded; see "
                           f"{target}/results")
    return summary.ok
