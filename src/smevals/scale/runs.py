"""`smevals run --dask`: each attempt on a worker; each Run written here as it arrives.

With `-g`, a Job goes out with the judge cache entries of the requests that grading the
earlier Runs of its inputs makes (a deterministic runner says the same again), and the
entries its Grade made come back with it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from smevals.scale import ClusterSpec
from smevals.scale.client import connect, drive, ship
from smevals.scale.packed import Entries
from smevals.scale.unpack import keep_judged, unpack
from smevals.scale.worker import Made, RunTask, attempt_remote
from smevals.store.read import Obj
from smevals.store.records import RunRecord

if TYPE_CHECKING:
    from pathlib import Path

    from smevals.evaldef.model import Eval, Grader
    from smevals.run.pipeline import Made as Ran  # a Run, and its Grade with -g
    from smevals.run.plan import Job
    from smevals.run.prepared import Prepared
    from smevals.store.read import Store


def run_on_cluster(prep: Prepared, spec: ClusterSpec, done: Callable[[Ran], None]) -> None:
    """Attempt `prep.jobs` on the cluster at `spec`; `done((Attempt, GradeResult|None))`."""
    session = prep.session
    version = _version(prep.grader)
    cached = _earlier_entries(prep, version)
    with connect(spec) as client:
        bundle, shipped = ship(client, prep.ev.path, session.store.root, session.runner)

        def submit(key: str, job: Job) -> Any:
            task = RunTask(bundle.runner, prep.ev.name, session.config.name, session.runner, job,
                           session.timeout, session.provenance,
                           prep.grader.name if prep.grader else None, version,
                           cached(job))
            return client.submit(attempt_remote, task, shipped, key=key, pure=False,
                                 resources=spec.resources or None)

        def write(job: Job, made: Made) -> Ran | None:
            return None if made.run is None else _keep(session.store.root, job, made)

        drive(client, prep.jobs, submit, write, done)


def _version(grader: Grader | None) -> str:
    if grader is None:
        return ""
    from smevals.grade.version import grader_version

    return grader_version(grader)


def _keep(root: Path, job: Job, made: Made) -> Ran:
    from smevals.files.canonical import loads
    from smevals.run.attempt import Attempt
    from smevals.run.pipeline import Made as Ran

    assert made.run is not None
    keep_judged(root, made.judged)
    written = unpack(root, made.run)
    record = loads(made.run.record)
    grade = None
    if made.grade is not None:
        from smevals.scale.grades import result_of

        grade = result_of(root, Obj("run", written.id, written.rel, record), made)
    return Ran(Attempt(job, written, record), grade)


def _earlier_entries(prep: Prepared, version: str) -> Callable[[Job], Entries]:
    """A Job's judge cache entries: those of the requests grading each earlier ok Run of the
    same inputs makes, found once per inputs hash."""
    from smevals.grade.dry import judge_checks

    judged = judge_checks(prep.grader) if prep.grader is not None else []
    if not judged:
        return lambda job: ()
    from smevals.scale.grades import cached_for

    assert prep.grader is not None      # it has judge Checks
    store = prep.session.store
    plan = _Plan(prep.ev, prep.grader, version, store)
    earlier: dict[str, list[Obj[RunRecord]]] = {}
    for run in store.runs():
        inputs = run.record.get("inputs")
        if run.record.get("status") == "ok" and isinstance(inputs, dict):
            earlier.setdefault(str(inputs.get("hash")), []).append(run)
    found: dict[str, Entries] = {}

    def entries(job: Job) -> Entries:
        key = str(job.inputs.get("hash"))
        if key not in found:
            merged = dict(e for run in earlier.get(key, []) for e in cached_for(plan, run))
            found[key] = tuple(sorted(merged.items()))
        return found[key]

    return entries


@dataclass(frozen=True)
class _Plan:                    # what scale.grades.cached_for reads of a grade plan
    ev: Eval
    grader: Grader
    version: str
    store: Store
