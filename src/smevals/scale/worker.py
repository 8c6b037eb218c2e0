"""What runs on a Dask worker: an attempt (and its Grade with `-g`) or a Grade, each in a
temporary store of its own. The objects made there are sent back whole (record and files)
for the client to verify and write; nothing on a worker touches the real store. Judge cache
entries travel the same way: those a Grade may need come with its task, those a Grade made
go back with it. Secrets come from the worker's environment, never from the task."""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals import caches
from smevals.evaldef.model import Eval
from smevals.files.canonical import loads
from smevals.run.plan import Job, Runner
from smevals.scale.bundle import Bundle, materialize
from smevals.scale.packed import Entries, Packed
from smevals.store.layout import RECORD_NAMES
from smevals.store.read import Obj, Store
from smevals.store.records import RunFields

if TYPE_CHECKING:
    from smevals.proc.launch import ProcessGroups

_EVALS: dict[tuple[str, str], Eval] = {}
caches.register(__name__, "_EVALS")
_LOCAL = threading.local()


@dataclass(frozen=True)
class RunTask:
    runner_at: str | None        # the runner program's path in the bundle
    eval_name: str
    config: str
    runner: Runner
    job: Job
    timeout: float | None
    provenance: dict[str, Any]
    grader: str | None = None
    version: str = ""
    cached: Entries = ()        # judge cache entries grading earlier Runs of these inputs used


@dataclass(frozen=True)
class GradeTask:
    eval_name: str
    grader: str
    version: str
    run: Packed
    judge_cache: bool = True        # False: --no-judge-cache
    cached: Entries = ()            # the client's entries for the requests this Grade makes


@dataclass(frozen=True)
class Made:
    run: Packed | None
    grade: Packed | None = None
    why: str = ""
    judged: Entries = ()            # judge cache entries made here, for the client to keep


Shipped = tuple[Bundle, dict[str, bytes]]      # the Eval's files: a bundle and its contents


def attempt_remote(task: RunTask, shipped: Shipped) -> Made:
    """Attempt one Job (and grade it with -g) in a temporary store; send the objects back."""
    from smevals.proc.launch import ProcessGroups
    from smevals.run.attempt import Session, attempt

    ev = _eval(shipped, task.eval_name)
    runner = task.runner
    if runner.program is not None and task.runner_at is not None:
        runner = replace(runner, program=ev.path / task.runner_at)
    store = _scratch()
    session = Session(ev, ev.configs[task.config], runner, store, task.timeout,
                      task.provenance, ProcessGroups(), dict(os.environ))
    made = attempt(session, task.job)
    if made is None:
        return Made(None)
    try:
        run = pack(store.root, "run", made.written.rel)
        if not task.grader or not made.ok:
            return Made(run)
        obj = Obj("run", made.written.id, made.written.rel, made.record)
        graded = _grade(ev, GradeTask(task.eval_name, task.grader, task.version, run, True,
                                      task.cached), obj,
                        store, session.groups)
        return replace(graded, run=run)
    finally:
        shutil.rmtree(made.written.path, ignore_errors=True)


def grade_remote(task: GradeTask, shipped: Shipped) -> Made:
    """Grade one Run (sent whole, verified on arrival) in a temporary store."""
    from smevals.proc.launch import ProcessGroups
    from smevals.scale.unpack import unpack

    ev = _eval(shipped, task.eval_name)
    store = _scratch()
    written = unpack(store.root, task.run)
    try:
        obj = Obj("run", written.id, written.rel, loads(task.run.record))
        return _grade(ev, task, obj, store, ProcessGroups())
    finally:
        shutil.rmtree(written.path, ignore_errors=True)


def _grade(ev: Eval, task: GradeTask, run: Obj[RunFields], store: Store,
           groups: ProcessGroups) -> Made:
    """Grade `run` with the judge cache `task.cached` (only) in the scratch store; the Grade
    and the judge cache entries made meanwhile."""
    from smevals.grade.apply import grade_run
    from smevals.grade.job import GradeJob
    from smevals.store import judgecache

    cache = store.root / judgecache.FOLDER
    shutil.rmtree(cache, ignore_errors=True)     # nothing left from an earlier task
    for key, data in task.cached:
        judgecache.accept(store.root, key, data)
    try:
        result = grade_run(GradeJob(ev, ev.graders[task.grader], task.version, run, store,
                                    dict(os.environ), groups, task.judge_cache))
        shipped = {key for key, _ in task.cached}
        made = [(path.name.split(".")[0], path) for _rel, path in judgecache.entries(store.root)
                if path is not None and path.is_file()]
        judged = tuple((key, path.read_bytes()) for key, path in made if key not in shipped)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    if result is None:
        return Made(None, None, "", judged)
    try:
        return Made(None, pack(store.root, "grade", result.rel), result.why, judged)
    finally:
        shutil.rmtree(store.root / result.rel, ignore_errors=True)


def _scratch() -> Store:
    """This worker thread's own store for making objects before they are sent back: in
    SMEVALS_DASK_SCRATCH (e.g. /dev/shm: nothing there needs to reach a disk, but runners
    run in it, and /dev/shm is often mounted noexec), else the Dask worker's own folder,
    which Dask removes with the worker, or purges at the next start on that machine when
    the worker was killed (outside a worker, the temporary directory)."""
    store = getattr(_LOCAL, "store", None)
    if store is None:
        folder = tempfile.mkdtemp(prefix="smevals-worker-", dir=_scratch_base())
        atexit.register(shutil.rmtree, folder, True)
        store = Store(Path(folder) / "store")
        _LOCAL.store = store
    return store


def _scratch_base() -> str | None:
    """Where the scratch stores go (see `_scratch`); None: the temporary directory."""
    named = os.environ.get("SMEVALS_DASK_SCRATCH")
    if named:
        return named
    try:
        from distributed import get_worker

        return str(get_worker().local_directory)
    except (ImportError, ValueError):       # not in a Dask worker
        return None


def _eval(shipped: Shipped, name: str) -> Eval:
    """The Eval rebuilt from the bundle, loaded once per worker process."""
    bundle, blobs = shipped
    key = (bundle.digest, name)
    if key not in _EVALS:
        from smevals.evaldef.load import load_eval

        _EVALS[key] = replace(load_eval(materialize(bundle, blobs), cached=False), name=name)
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


