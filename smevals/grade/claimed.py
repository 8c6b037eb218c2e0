"""Grading one Run under its claim, so that two processes never grade it at once, and not at
all when another process gave it a current Grade meanwhile (`smevals grade`, `run -g`)."""

from __future__ import annotations

import threading

from smevals.grade.apply import GradeJob, GradeResult, grade_run, grading_data
from smevals.grade.select import Choice, counts
from smevals.grade.version import grading_hash
from smevals.phases import phase
from smevals.store.checkedcopy import Damaged
from smevals.store.claims import claims_for
from smevals.store.layout import object_parent
from smevals.store.read import Obj, Store
from smevals.store.records import GradeRecord


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


def claimed_grade(job: GradeJob, since: Since | None = None,
                  regrade: bool = False) -> GradeResult | None:
    """Grade a Run under its claim (store/claims.py), so two processes never grade it at
    once; None when another process gave it a current Grade meanwhile (or on cancel)."""
    claims = claims_for(job.store.root, "grade")
    with claims.hold(f"{job.grader.name}\0{job.run.rel}", job.groups.cancelled.is_set) as got:
        with phase("grade claim"):
            if not got or (not regrade and _graded_meanwhile(job, since or Since())):
                return None
        try:
            return grade_run(job)
        except Damaged as exc:          # never graded, named with the other damage at exit
            job.store.note_damaged(exc.rel, exc.why)
            return None


def _graded_meanwhile(job: GradeJob, since: Since) -> bool:
    rec = job.run.record
    parent = object_parent("grade", [job.grader.name, rec["task"]["name"],
                                     rec["config"]["name"], rec["model"]])
    choice = Choice(job.grader.name, job.version,
                    {rec["task"]["name"]: grading_hash(grading_data(job.ev, job.run))})
    return any(counts(g, choice) for g in since.grades(job.store, parent)
               if isinstance(g.record.get("run"), dict)
               and g.record["run"].get("rel") == job.run.rel)
