"""A grade plan: which Runs one grader version grades, and why each is graded again.

Made by `smevals grade` (commands/grade.py); read by the Dask client too (scale/grades.py)."""

from __future__ import annotations

from dataclasses import dataclass

from smevals.evaldef.model import Eval, Grader
from smevals.store.read import Obj, Store
from smevals.store.records import GradeRecord, RunRecord


@dataclass
class Plan:
    ev: Eval
    grader: Grader
    version: str
    store: Store
    todo: list[Obj[RunRecord]]
    previous: dict[str, Obj[GradeRecord] | None]
    why: dict[str, str]             # Run rel -> VERSION or GRADING, when graded again
    regrade: bool = False
    known: frozenset[str] = frozenset()     # ids of the Grades the plan was made from
