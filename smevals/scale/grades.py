"""`smevals grade --dask`: each Grade made on a worker; written here as it arrives."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from smevals.scale import ClusterSpec
from smevals.scale.client import connect, drive, ship
from smevals.scale.unpack import unpack
from smevals.scale.worker import GradeTask, Made, grade_remote, pack
from smevals.store.store import Obj


def grade_on_cluster(plan: Any, spec: ClusterSpec, done: Callable[[Any], None]) -> None:
    """Grade `plan.todo` on the cluster at `spec`; `done(GradeResult)` for each."""
    root = plan.store.root
    with connect(spec) as client:
        _bundle, shipped = ship(client, plan.ev.path, root)

        def submit(key: str, run: Obj) -> Any:
            task = GradeTask(plan.ev.name, plan.grader.name, plan.version,
                             pack(root, "run", run.rel))
            return client.submit(grade_remote, task, shipped, key=key, pure=False,
                                 resources=spec.resources or None)

        def write(run: Obj, made: Made) -> Any:
            return None if made.grade is None else result_of(root, run, made)

        drive(client, plan.todo, submit, write, done)


def result_of(root: Path, run: Obj, made: Made) -> Any:
    """Write the Grade a worker made; the GradeResult the console shows."""
    from smevals.grade.apply import GradeResult
    from smevals.store.canonical import loads

    assert made.grade is not None
    written = unpack(root, made.grade)
    record = loads(made.grade.record)
    return GradeResult(run, written.id, written.rel, record["outcome"], record["score"],
                       record, made.why)
