"""`smevals grade` and `smevals regrade`: new Grades, never touching a Run or an older Grade."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol, cast

from smevals import phases
from smevals.errors import Problem, SmevalsError
from smevals.evaldef.model import Eval, Grader, Task
from smevals.evaldef.pick import load_evals
from smevals.grade.apply import GradeResult, grading_data, is_no_check
from smevals.grade.claimed import Since, claimed_later
from smevals.grade.job import GradeJob
from smevals.grade.plan import Plan
from smevals.grade.problems import checked_grader, task_key_warnings
from smevals.grade.select import Choice, counts, grades_by_run
from smevals.grade.version import grader_version, grading_hash
from smevals.proc.launch import ProcessGroups
from smevals.run import stale
from smevals.run.engine import Interrupted, run_pool
from smevals.run.shard import Shard
from smevals.run.writing import writing_to
from smevals.store import folders
from smevals.store.batch import Committer
from smevals.store.checkedcopy import Damaged
from smevals.store.layout import parse_iso
from smevals.store.read import Obj, Store, id_matches, store_root
from smevals.store.records import GradeRecord, RunRecord

if TYPE_CHECKING:
    from smevals.judges.flights import Asked
    from smevals.run.attempt import Attempt
    from smevals.run.prepared import Prepared
    from smevals.scale import ClusterSpec


@dataclass(frozen=True)
class GradeOptions:
    paths: tuple[str, ...]
    grader: str = "default"
    jobs: int = 4
    store: str | None = None
    tasks: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    configs: tuple[str, ...] = ()
    runs: tuple[str, ...] = ()
    since: str | None = None
    outcome: str | None = None
    from_version: str | None = None
    regrade: bool = False
    shard: Shard | None = None
    cluster: ClusterSpec | None = None     # grade on a Dask cluster
    judge_cache: bool = True        # False: --no-judge-cache
    dry_run: bool = False
    include_stale: bool = False     # grade Runs made from an older task, config or runner too


class GradeUI(Protocol):
    def start(self, ev: Eval, version: str, total: int) -> None: ...
    def done(self, result: GradeResult) -> None: ...
    def warn(self, problem: Problem) -> None: ...
    def finished(self, ev: Eval, summary: GradeSummary) -> None: ...


@dataclass
class GradeSummary:
    graded: int = 0
    passed: int = 0
    failed: int = 0
    errored: int = 0                # Grades with outcome error (a Check had no verdict)
    no_check: int = 0               # ... of which no Check of the grader applied to the Task
    retried: int = 0                # graded again because their current Grade was an error
    judge_calls: int = 0            # --dry-run: judge calls the Checks would make ...
    judge_cached: int = 0           # ... and how many of them the judge cache serves
    judge_shared: int = 0           # ... and how many repeat a request asked in this grade
    skipped_stale: int = 0          # stale Runs left out (no --include-stale)
    skipped_failed_runs: int = 0
    damaged: int = 0                # Runs `verify` would reject: not graded (named at exit)
    up_to_date: int = 0
    planned: int = 0                # Runs planned for grading (fewer are graded when interrupted)
    new_version: int = 0            # graded again: only Grades of older grader versions
    new_grading: int = 0            # graded again: same version, changed grading data
    flips_to_fail: int = 0
    flips_to_pass: int = 0
    score_changes: list[float] = field(default_factory=list)
    interrupted: bool = False
    evals: int = 0                  # Evals summed into this summary

    def add(self, other: GradeSummary) -> None:
        """Sum another Eval's counts into this one (a Suite's total)."""
        for name, value in vars(other).items():
            if isinstance(value, list):
                getattr(self, name).extend(value)
            elif isinstance(value, bool):
                setattr(self, name, getattr(self, name) or value)
            else:
                setattr(self, name, getattr(self, name) + value)


def grade_command(opts: GradeOptions, ui: GradeUI) -> GradeSummary:
    """Grade every Eval in turn; the total over them. With several Evals (a Suite), each
    Eval's own counts go to `ui.finished` when it is done."""
    phases.started()
    with phases.phase("plan"):
        plans = [(_plan(ev, opts, mine := GradeSummary(evals=1)), mine)
                 for ev in load_evals(opts.paths)]
    for plan, _mine in plans:
        for task in _tasks(plan.ev, opts.tasks):
            for warning in task_key_warnings(task):
                ui.warn(warning)
    groups = ProcessGroups()
    for plan, mine in plans:
        try:
            if opts.dry_run:
                _dry(plan, mine, opts.judge_cache)
            else:
                ui.start(plan.ev, plan.version, len(plan.todo))
                _grade_all(plan, opts, groups, ui, mine)
        except Interrupted:
            mine.interrupted = True
            break
        if len(plans) > 1:
            ui.finished(plan.ev, mine)
    total = GradeSummary()
    for _done, mine in plans:
        total.add(mine)
    return total


def _tasks(ev: Eval, names: tuple[str, ...]) -> list[Task]:
    return [t for t in ev.tasks if not names or t.name in names]


def _plan(ev: Eval, opts: GradeOptions, summary: GradeSummary, store: Store | None = None,
          grader: Grader | None = None) -> Plan:
    grader = grader or checked_grader(ev, opts.grader, opts.tasks)
    version = grader_version(grader)
    store = store or Store(store_root(ev.path, ev.name, opts.store))
    folders.refuse_links(store.root)            # a writer: never through a linked folder
    store.note_orphans()
    history = grades_by_run(store.grades(), grader.name)
    selected = _select(store, ev, opts, history)
    summary.damaged += sum(rel.startswith("runs/") for rel, _why in store.broken)
    todo, previous, why = [], {}, {}
    is_stale = None if opts.include_stale else stale.Staleness(ev).is_stale
    for run in selected:
        if opts.shard is not None and not opts.shard.takes(run.rel):
            continue
        if run.record.get("status") != "ok":
            summary.skipped_failed_runs += 1
            continue
        past = history.get(run.rel, [])
        previous[run.rel] = past[-1] if past else None
        choice = Choice(grader.name, version,
                        {run.record["task"]["name"]: grading_hash(grading_data(ev, run))})
        counted = [g for g in past if counts(g, choice)]
        current = bool(counted) and (counted[-1].record.get("outcome") != "error"
                                     or is_no_check(counted[-1].record))
        if current and not opts.regrade:
            summary.up_to_date += 1
            continue
        if is_stale is not None and is_stale(run):
            summary.skipped_stale += 1
            continue
        if counted and not current:
            why[run.rel] = ERROR
        elif past and not current:
            same = any(counts(g, Choice(grader.name, version)) for g in past)
            why[run.rel] = GRADING if same else VERSION
        todo.append(run)
    summary.planned += len(todo)
    return Plan(ev, grader, version, store, todo, previous, why, opts.regrade,
                frozenset(g.id for g in store.grades()))


VERSION = "version"        # its Grades are all of older grader versions
GRADING = "grading"        # graded by this version, but with older grading data
ERROR = "error"            # its current Grade is an error (no verdict): tried again


def _select(store: Store, ev: Eval, opts: GradeOptions,
            history: dict[str, list[Obj[GradeRecord]]]) -> list[Obj[RunRecord]]:
    since = _since(opts.since)
    out = []
    for run in sorted(store.runs(), key=lambda r: r.rel):
        rec = run.record
        if opts.tasks and rec["task"]["name"] not in opts.tasks:
            continue
        if opts.models and rec["model"] not in opts.models:
            continue
        if opts.configs and rec["config"]["name"] not in opts.configs:
            continue
        if opts.runs and not any(id_matches(run.id, p) for p in opts.runs):
            continue
        if since and parse_iso(rec["started"]) < since:
            continue
        past = history.get(run.rel)
        newest = past[-1] if past else None
        if opts.outcome and (newest is None or newest.record.get("outcome") != opts.outcome):
            continue
        if opts.from_version and (newest is None or not str(
                newest.record["grader"]["version"]).startswith(opts.from_version)):
            continue
        out.append(run)
    damaged = any(rel.startswith("runs/") for rel, _why in store.broken)
    if not out and (opts.runs or not (store.runs() or damaged)):
        what = "matching Runs" if opts.runs else "Runs"
        raise SmevalsError(f"{ev.name}: no {what} in {store.root}")
    return out


def _since(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise SmevalsError(f"--since: '{text}' is not a date (use YYYY-MM-DD or an ISO "
                           "date and time)") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _grade_all(plan: Plan, opts: GradeOptions, groups: ProcessGroups, ui: GradeUI,
               summary: GradeSummary) -> None:
    from smevals.judges.flights import Asked

    environ = dict(os.environ)
    since = Since(plan.known)
    asked = Asked()
    committer = Committer()

    def work(run: Obj[RunRecord]) -> Future[GradeResult] | None:
        job = GradeJob(plan.ev, plan.grader, plan.version, run, plan.store, environ, groups,
                       opts.judge_cache, asked)
        return claimed_later(job, committer, since, plan.regrade)

    def done(result: GradeResult) -> None:
        rel = result.run.rel
        _count(summary, result, plan.previous.get(rel))
        summary.new_version += plan.why.get(rel) == VERSION
        summary.new_grading += plan.why.get(rel) == GRADING
        summary.retried += plan.why.get(rel) == ERROR
        ui.done(result)

    with writing_to(plan.store.root):
        if opts.cluster is not None:
            from smevals.scale.grades import grade_on_cluster

            grade_on_cluster(plan, opts.cluster, done, opts.judge_cache)
        else:
            todo = spread(plan.todo) if opts.jobs > 1 else plan.todo
            try:
                run_pool(todo, work, opts.jobs, done, groups.cancel)
            finally:
                committer.close()
                broken = {rel for rel, _why in plan.store.broken}
                summary.damaged += sum(run.rel in broken for run in plan.todo)


def spread(runs: list[Obj[RunRecord]]) -> list[Obj[RunRecord]]:
    """The Runs in rounds: the first sample of every Task × config × model, then the second...
    Samples of one pair often build the same judge request, which is asked once
    (judges/flights.py): side by side in a pool, the later ones would hold a slot waiting
    for it; a round later, they find its answer in the judge cache."""
    seen: dict[tuple[str, str, str], int] = {}
    rounds: list[int] = []
    for run in runs:
        rec = run.record
        key = (rec["task"]["name"], rec["config"]["name"], rec["model"])
        rounds.append(seen.get(key, 0))
        seen[key] = rounds[-1] + 1
    order = sorted(range(len(runs)), key=lambda i: rounds[i])
    return [runs[i] for i in order]


def _count(summary: GradeSummary, result: GradeResult, before: Obj[GradeRecord] | None) -> None:
    summary.graded += 1
    summary.passed += result.outcome == "pass"
    summary.failed += result.outcome == "fail"
    summary.errored += result.outcome == "error"
    summary.no_check += is_no_check(result.record)
    if before is None:
        return
    old = before.record
    summary.flips_to_fail += old.get("outcome") == "pass" and result.outcome == "fail"
    summary.flips_to_pass += old.get("outcome") == "fail" and result.outcome == "pass"
    if old.get("score") is not None and result.score is not None:
        summary.score_changes.append(result.score - float(cast(float, old["score"])))


def grade_leftovers(ev: Eval, grader: Grader, store: Store, selection: GradeOptions,
                    groups: ProcessGroups, on_done: Callable[[GradeResult], None],
                    graded: frozenset[str] = frozenset()) -> None:
    """`run -g`: grade the selected Runs that still have no current Grade (an interrupted
    run or grade left them), after the Runs just made; not those `graded` (Run rels) by this
    command already, whose Grade may be an error (no verdict) asked for a moment ago."""
    store.forget()
    if not store.runs(brief=True):
        return
    plan = _plan(ev, selection, GradeSummary(), store, grader)
    plan.todo = [run for run in plan.todo if run.rel not in graded]
    if plan.todo:
        _grade_all(plan, selection, groups, _Hook(on_done), GradeSummary())


class _Hook:
    def __init__(self, on_done: Callable[[GradeResult], None]):
        self.on_done = on_done

    def start(self, ev: Eval, version: str, total: int) -> None:
        pass

    def done(self, result: GradeResult) -> None:
        self.on_done(result)

    def warn(self, problem: Problem) -> None:
        pass

    def finished(self, ev: Eval, summary: GradeSummary) -> None:
        pass


def _dry(plan: Plan, summary: GradeSummary, judge_cache: bool = True) -> None:
    """Count the judge calls grading `plan.todo` would make, those the cache serves (none
    with --no-judge-cache) and those repeating a request asked before, by building every
    judge Check's requests without sending one. Nothing is written."""
    from smevals.grade.dry import dry_judge, judge_checks
    from smevals.judges.engine import DryCount

    count = DryCount()
    judged = judge_checks(plan.grader)
    groups = ProcessGroups()
    for run in plan.todo if judged else []:
        job = GradeJob(plan.ev, plan.grader, plan.version, run, plan.store, dict(os.environ),
                       groups, judge_cache)
        try:
            dry_judge(job, judged, count)
        except Damaged as exc:
            plan.store.note_damaged(exc.rel, exc.why)
            summary.damaged += 1
    summary.judge_calls += count.calls
    summary.judge_cached += count.cached
    summary.judge_shared += count.shared


class AfterRun:
    """`smevals run -g`: grade each Run as soon as it finished, then the Runs an interrupt
    left (commands/run.py's `Grading`). One per command: what it works out once per
    preparation (the grader's version, the Grades written since, the judge requests asked)
    is kept here with the preparation itself, so no id is ever reused for another."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # id(prep) -> (prep, its grader, version, Since, Asked): the prep is held, so its id
        # is never reused for another while the entry lives
        self._state: dict[int, tuple[Prepared, Grader, str, Since, Asked]] = {}

    def _of(self, prep: Prepared) -> tuple[Prepared, Grader, str, Since, Asked]:
        with self._lock:
            if id(prep) not in self._state:
                from smevals.judges.flights import Asked

                grader = prep.grader
                assert grader is not None          # `run -g` grades with a grader
                self._state[id(prep)] = (prep, grader, grader_version(grader), Since(),
                                         Asked())
            return self._state[id(prep)]

    def sealed(self, prep: Prepared, made: Attempt) -> GradeResult | None:
        """Grade a Run this process has sealed and not yet placed, from the private copy
        made as it was sealed (`made.copy`), with no claim (nobody else sees the Run yet);
        the Grade is sealed, not placed (`GradeResult.sealed`)."""
        from smevals.grade.apply import grade_sealed

        _prep, grader, version, _since, asked = self._of(prep)
        session = prep.session
        assert made.copy is not None
        run = Obj("run", made.written.id, made.written.rel, made.record)
        return grade_sealed(GradeJob(prep.ev, grader, version, run, session.store,
                                     session.environ, session.groups, asked=asked), made.copy)

    def leftovers(self, prep: Prepared, jobs: int, graded: frozenset[str],
                  done: Callable[[GradeResult], None]) -> None:
        """Grade the Runs of the preparation's selection that have no current Grade."""
        _prep, grader, _version, _since, _asked = self._of(prep)
        selection = GradeOptions((), grader.name, jobs,
                                 tasks=tuple(dict.fromkeys(p.task for p in prep.pairs)),
                                 models=tuple(dict.fromkeys(p.model for p in prep.pairs)),
                                 configs=(prep.session.config.name,))
        grade_leftovers(prep.ev, grader, prep.session.store, selection,
                        prep.session.groups, done, graded)
