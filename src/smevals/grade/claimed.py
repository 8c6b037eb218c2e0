"""Grading one Run under its claim, so that two processes never grade it at once, and not at
all when another process gave it a current Grade meanwhile (`smevals grade`, `run -g`)."""

from __future__ import annotations

import dataclasses
import threading
from concurrent.futures import Future

from smevals.grade.apply import GradeResult, grade_run, grading_data
from smevals.grade.job import GradeJob
from smevals.grade.select import Choice, counts
from smevals.grade.version import grading_hash
from smevals.phases import phase
from smevals.store.batch import Committer
from smevals.store.checkedcopy import Damaged
from smevals.store.claims import claims_for
from smevals.store.layout import object_parent
from smevals.store.read import Obj, Store
from smevals.store.records import GradeRecord
from smevals.store.write import Written


class Since:
    """The Grades written since a plan was made, per Grade folder, each read once: what a
    claim holder looks through before it grades a Run (another process may have)."""

    def __init__(self, known: frozenset[str] = frozenset()):
        self.seen = set(known)
        self.found: dict[str, list[Obj[GradeRecord]]] = {}
        self.lock = threading.Lock()

    def grades(self, store: Store, parent: str) -> list[Obj[GradeRecord]]:
        with self.lock:
            new = store.fresh("grade", parent, self.seen)
            self.seen.update(g.id for g in new)
            found = self.found.setdefault(parent, [])
            found.extend(new)
            return list(found)


def claimed_later(job: GradeJob, committer: Committer, since: Since | None = None,
                  regrade: bool = False) -> Future[GradeResult] | None:
    """Grade a Run under its claim (store/claims.py), so two processes never grade it at
    once; None when another process gave it a current Grade meanwhile (or on cancel). The
    Grade is placed by `committer` (store/batch.py) while the caller goes on: a future of
    the Grade once placed. The claim is held until then, so that another process that takes
    it next finds the Grade."""
    claims = claims_for(job.store.root, "grade")
    key = f"{job.grader.name}\0{job.run.rel}"
    if not claims.take(key, job.groups.cancelled.is_set):
        return None
    try:
        with phase("grade claim"):
            fresh = regrade or not _graded_meanwhile(job, since or Since())
        result = grade_run(job, place=False) if fresh else None
    except Damaged as exc:              # never graded, named with the other damage at exit
        job.store.note_damaged(exc.rel, exc.why)
        result = None
    except BaseException:
        claims.give_back(key)
        raise
    if result is None or result.sealed is None:
        claims.give_back(key)
        return None
    out: Future[GradeResult] = Future()

    def placed(future: Future[list[Written]]) -> None:
        try:
            future.result()
            out.set_result(dataclasses.replace(result, sealed=None))
        except BaseException as exc:
            out.set_exception(exc)
        finally:
            claims.give_back(key)

    committer.submit([result.sealed]).add_done_callback(placed)
    return out


def _graded_meanwhile(job: GradeJob, since: Since) -> bool:
    rec = job.run.record
    parent = object_parent("grade", [job.grader.name, rec["task"]["name"],
                                     rec["config"]["name"], rec["model"]])
    choice = Choice(job.grader.name, job.version,
                    {rec["task"]["name"]: grading_hash(grading_data(job.ev, job.run))})
    return any(counts(g, choice) for g in since.grades(job.store, parent)
               if isinstance(g.record.get("run"), dict)
               and g.record["run"].get("rel") == job.run.rel)
