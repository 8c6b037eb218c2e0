"""A Grade's judge requests, built without sending one: what `grade --dry-run` counts, and
which judge cache entries the client ships with a Run to a Dask worker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from smevals.evaldef.model import Check, Grader
from smevals.grade.apply import grading_data, judge_context
from smevals.grade.job import GradeJob, applicable
from smevals.store.checkedcopy import read_checked

if TYPE_CHECKING:
    from smevals.judges.engine import DryCount


def judge_checks(grader: Grader) -> list[Check]:
    from smevals import checkers
    from smevals.grade.version import JUDGE_CHECKERS

    return [c for c in grader.checks if checkers.canonical_name(c.checker) in JUDGE_CHECKERS]


def dry_judge(job: GradeJob, judged: list[Check], count: DryCount) -> None:
    """Add the calls the judge Checks `judged` would make grading `job.run` to `count` (a
    DryCount, which also keeps each request). Nothing is asked or written. Raises Damaged
    when the Run's output.txt is not the one its record lists."""
    from smevals import checkers

    run = job.run
    task = {**run.record.get("task", {}), **grading_data(job.ev, run)}
    run_dir = job.store.path_of(run)
    output = read_checked(job.store.root, run.rel, run.record,
                          "output.txt").decode("utf-8", errors="replace")
    for check in applicable(tuple(judged), task):
        inp = checkers.CheckInput(output=output, task=task, usage=run.record.get("usage"),
                                  run_dir=run_dir, workspace=None,
                                  check_name=check.spec.get("name"),
                                  judge=judge_context(job, check, dry=count))
        checkers.run_check(check.checker, check.options, inp)
