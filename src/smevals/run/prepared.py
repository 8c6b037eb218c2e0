"""A prepared run: one Eval and Config checked and planned, before any runner starts.

Made by `smevals run` (commands/run.py); read by the Dask client too (scale/runs.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from smevals.errors import Problem
from smevals.evaldef.model import Eval, Grader
from smevals.run.attempt import Session
from smevals.run.plan import Job, JobPlan, PairPlan


@dataclass
class Prepared:
    ev: Eval
    session: Session
    jobs: JobPlan | list[Job]      # a JobPlan makes its Jobs as they are taken
    pairs: list[PairPlan]
    grader: Grader | None
    warnings: list[Problem] = field(default_factory=list)
    chosen: str = ""               # what --limit / --sample chose, when given
