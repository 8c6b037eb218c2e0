"""`smevals grade` (what it shares with `regrade` is in cli/grading.py)."""

from __future__ import annotations

from smevals.cli.base import cli, evals_argument
from smevals.cli.grading import filter_options, run_grading


@cli.command("grade", short_help="Grade the Runs that have no Grade from the current grader.")
@evals_argument()
@filter_options
def grade_cmd(paths: tuple[str, ...], **kw: object) -> None:
    """Grade every successful Run that has no Grade from the current grader version.

    Failed Runs are skipped, and stale ones (made from an older task, config or runner)
    unless --include-stale. Editing the grader, a checker program or a Task's grading
    data makes the affected Grades out of date; older Grades are never changed.
    """
    run_grading(False, paths, **kw)
