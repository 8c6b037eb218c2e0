"""What runs on a Dask worker: an attempt (and its Grade with `-g`) or a Grade, each in a
temporary store of its own. The objects made there are sent back whole (record and files)
for the client to verify and write; nothing on a worker touches the real store. Secrets
come from the worker's environment, never from the task."""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from smevals.run.plan import Job, Runner
from smevals.scale.bundle import Bundle, materialize
from smevals.spec.model import Eval
from smevals.store.canonical import loads
from smevals.store.layout import RECORD_NAMES
from smevals.store.store import Obj, Store

_EVALS: dict[tuple[str, str], Eval] = {}


@dataclass(frozen=True)
class Packed:
    """One object on its way to the client: record bytes, files (path, mode, bytes or a
    symlink target)."""

    kind: str
    rel: str
    record: bytes
    files: tuple[tuple[str, int, bytes | None, str | None], ...]


@dataclass(frozen=True)
class RunTask:
    bundle: Bundle
    eval_name: str
    config: str
    runner: Runner
    job: Job
    timeout: float | None
    provenance: dict[str, Any]
    grader: str | None = None
    version: str = ""


@dataclass(frozen=True)
class GradeTask:
    bundle: Bundle
    eval_name: str
    grader: str
    version: str
    run: Packed


@dataclass(frozen=True)
class Made:
    run: Packed | None
    grade: Packed | None = None
    why: str = ""


def attempt_remote(task: RunTask, blobs: dict[str, bytes]) -> Made:
    """Attempt one Job (and grade it with -g) in a temporary store; send the objects back."""
    from smevals.run.attempt import Session, attempt
    from smevals.run.execute import ProcessGroups

    ev = _eval(task.bundle, blobs, task.eval_name)
    runner = task.runner
    if runner.program is not None and task.bundle.runner is not None:
        runner = replace(runner, program=ev.path / task.bundle.runner)
    with tempfile.TemporaryDirectory(prefix="smevals-attempt-") as tmp:
        store = Store(Path(tmp) / "store")
        session = Session(ev, ev.configs[task.config], runner, store, task.timeout,
                          task.provenance, ProcessGroups(), dict(os.environ))
        made = attempt(session, task.job)
        if made is None:
            return Made(None)
        run = pack(store.root, "run", made.written.rel)
        if not task.grader or not made.ok:
            return Made(run)
        obj = Obj("run", made.written.id, made.written.rel, made.record)
        grade, why = _grade(ev, task.grader, task.version, obj, store, session.groups)
        return Made(run, grade, why)


def grade_remote(task: GradeTask, blobs: dict[str, bytes]) -> Made:
    """Grade one Run (sent whole, verified on arrival) in a temporary store."""
    from smevals.run.execute import ProcessGroups
    from smevals.scale.unpack import unpack

    ev = _eval(task.bundle, blobs, task.eval_name)
    with tempfile.TemporaryDirectory(prefix="smevals-grade-") as tmp:
        store = Store(Path(tmp) / "store")
        written = unpack(store.root, task.run)
        obj = Obj("run", written.id, written.rel, loads(task.run.record))
        grade, why = _grade(ev, task.grader, task.version, obj, store, ProcessGroups())
        return Made(None, grade, why)


def _grade(ev: Eval, grader: str, version: str, run: Obj, store: Store,
           groups: Any) -> tuple[Packed | None, str]:
    from smevals.grade.apply import GradeJob, grade_run

    result = grade_run(GradeJob(ev, ev.graders[grader], version, run, store,
                                dict(os.environ), groups))
    if result is None:
        return None, ""
    return pack(store.root, "grade", result.rel), result.why


def _eval(bundle: Bundle, blobs: dict[str, bytes], name: str) -> Eval:
    """The Eval rebuilt from the bundle, loaded once per worker process."""
    key = (bundle.digest, name)
    if key not in _EVALS:
        from smevals.spec.load import load_eval

        _EVALS[key] = replace(load_eval(materialize(bundle, blobs)), name=name)
    return _EVALS[key]


def pack(root: Path, kind: str, rel: str) -> Packed:
    """An object of the store at `root`, read whole, files in the record's order."""
    folder = root / rel
    data = (folder / RECORD_NAMES[kind]).read_bytes()
    files = []
    for entry in loads(data).get("files") or []:
        path = folder / entry["path"]
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            files.append((entry["path"], 0, None, os.readlink(path)))
        else:
            files.append((entry["path"], stat.S_IMODE(info.st_mode), path.read_bytes(), None))
    return Packed(kind, rel, data, tuple(files))


