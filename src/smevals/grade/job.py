"""One grading job (a grader version applied to one Run, with what it needs) and which
Checks of a grader apply to a Task: shared by grade/apply.py, the checker programs
(grade/program.py), the tampering marks and the dry run, so none of them imports another
for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from smevals.evaldef.model import Check, Eval, Grader
from smevals.proc.launch import ProcessGroups
from smevals.store.read import Obj, Store
from smevals.store.records import RunFields

if TYPE_CHECKING:
    from smevals.judges.flights import Asked


@dataclass(frozen=True)
class GradeJob:
    ev: Eval
    grader: Grader
    version: str
    run: Obj[RunFields]
    store: Store
    environ: dict[str, str]
    groups: ProcessGroups
    judge_cache: bool = True        # False: --no-judge-cache, every judge call made afresh
    asked: Asked | None = None      # identical requests asked once


def applicable(checks: tuple[Check, ...], task: dict[str, Any]) -> list[Check]:
    """The Checks that apply to this Task: those without `if_task_has`, and those whose key
    the Task has (a top-level or a grading key). The others are left out of its Grade."""
    return [c for c in checks
            if not isinstance(key := c.spec.get("if_task_has"), str) or key in task]
