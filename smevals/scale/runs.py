"""`smevals run --dask`: each attempt on a worker; each Run written here as it arrives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from smevals.scale import ClusterSpec
from smevals.scale.client import connect, drive, ship
from smevals.scale.unpack import keep_judged, unpack
from smevals.scale.worker import Made, RunTask, attempt_remote
from smevals.store.store import Obj


def run_on_cluster(prep: Any, spec: ClusterSpec, done: Callable[[Any], None]) -> None:
    """Attempt `prep.jobs` on the cluster at `spec`; `done((Attempt, GradeResult|None))`."""
    session = prep.session
    version = _version(prep.grader)
    with connect(spec) as client:
        bundle, shipped = ship(client, prep.ev.path, session.store.root, session.runner)

        def submit(key: str, job: Any) -> Any:
            task = RunTask(bundle.runner, prep.ev.name, session.config.name, session.runner, job,
                           session.timeout, session.provenance,
                           prep.grader.name if prep.grader else None, version)
            return client.submit(attempt_remote, task, shipped, key=key, pure=False,
                                 resources=spec.resources or None)

        def write(job: Any, made: Made) -> Any:
            return None if made.run is None else _keep(session.store.root, job, made)

        drive(client, prep.jobs, submit, write, done)


def _version(grader: Any) -> str:
    if grader is None:
        return ""
    from smevals.grade.version import grader_version

    return grader_version(grader)


def _keep(root: Any, job: Any, made: Made) -> tuple[Any, Any]:
    from smevals.run.attempt import Attempt
    from smevals.store.canonical import loads

    assert made.run is not None
    keep_judged(root, made.judged)
    written = unpack(root, made.run)
    record = loads(made.run.record)
    grade = None
    if made.grade is not None:
        from smevals.scale.grades import result_of

        grade = result_of(root, Obj("run", written.id, written.rel, record), made)
    return Attempt(job, written, record), grade
