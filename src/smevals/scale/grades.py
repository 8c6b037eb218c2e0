"""`smevals grade --dask`: each Grade made on a worker; written here as it arrives, with
the judge cache entries the worker made. Each Run goes out with the entries of the judge
requests its Grade makes (built here as `grade --dry-run` builds them), so a worker asks a
judge only what the store cannot answer."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from smevals.scale import ClusterSpec
from smevals.scale.client import connect, drive, ship
from smevals.scale.packed import Entries
from smevals.scale.unpack import keep_judged, unpack
from smevals.scale.worker import GradeTask, Made, grade_remote, pack
from smevals.store.read import Obj
from smevals.store.records import RunFields, RunRecord

if TYPE_CHECKING:
    from smevals.evaldef.model import Eval, Grader
    from smevals.grade.apply import GradeResult
    from smevals.grade.plan import Plan
    from smevals.store.read import Store


class Planned(Protocol):
    """What `cached_for` reads of a grade plan (a grade.plan.Plan, or what `run -g` makes)."""

    @property
    def ev(self) -> Eval: ...
    @property
    def grader(self) -> Grader: ...
    @property
    def version(self) -> str: ...
    @property
    def store(self) -> Store: ...


def grade_on_cluster(plan: Plan, spec: ClusterSpec, done: Callable[[GradeResult], None],
                     judge_cache: bool = True) -> None:
    """Grade `plan.todo` on the cluster at `spec`; `done(GradeResult)` for each."""
    root = plan.store.root
    with connect(spec) as client:
        _bundle, shipped = ship(client, plan.ev.path, root)

        def submit(key: str, run: Obj[RunRecord]) -> Any:
            task = GradeTask(plan.ev.name, plan.grader.name, plan.version,
                             pack(root, "run", run.rel), judge_cache,
                             cached_for(plan, run) if judge_cache else ())
            return client.submit(grade_remote, task, shipped, key=key, pure=False,
                                 resources=spec.resources or None)

        def write(run: Obj[RunRecord], made: Made) -> GradeResult | None:
            keep_judged(root, made.judged)
            return None if made.grade is None else result_of(root, run, made)

        drive(client, plan.todo, submit, write, done)


def result_of(root: Path, run: Obj[RunFields], made: Made) -> GradeResult:
    """Write the Grade a worker made; the GradeResult the console shows."""
    from smevals.files.canonical import loads
    from smevals.grade.apply import GradeResult

    assert made.grade is not None
    written = unpack(root, made.grade)
    record = loads(made.grade.record)
    return GradeResult(run, written.id, written.rel, record["outcome"], record["score"],
                       record, made.why)


def cached_for(plan: Planned, run: Obj[RunRecord]) -> Entries:
    """The store's judge cache entries of the requests grading `run` makes (as built with
    this process's environment: a worker whose environment makes other requests asks)."""
    from smevals.grade.dry import dry_judge, judge_checks
    from smevals.grade.job import GradeJob
    from smevals.judges.engine import DryCount
    from smevals.proc.launch import ProcessGroups
    from smevals.store import judgecache

    judged = judge_checks(plan.grader)
    if not judged:
        return ()
    from smevals.store.checkedcopy import Damaged

    count = DryCount()
    try:
        dry_judge(GradeJob(plan.ev, plan.grader, plan.version, run, plan.store,
                           dict(os.environ), ProcessGroups()), judged, count)
    except Damaged:         # nothing of it is shipped: the worker refuses it on arrival
        return ()
    found = dict(filter(None, (judgecache.entry_bytes(plan.store.root, request)
                               for request in count.requests)))
    return tuple(sorted(found.items()))
