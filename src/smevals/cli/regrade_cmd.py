"""`smevals regrade` (what it shares with `grade` is in cli/grading.py; the work is
commands/grade.py's, with `regrade` set)."""

from __future__ import annotations

from smevals.cli.base import cli, evals_argument
from smevals.cli.grading import filter_options, run_grading


@cli.command("regrade", short_help="Grade the selected Runs again, even those graded already.")
@evals_argument()
@filter_options
def regrade_cmd(paths: tuple[str, ...], **kw: object) -> None:
    """Write a new Grade for every selected Run, even when a current one exists.

    Ends with what changed against each Run's previous Grade.
    """
    run_grading(True, paths, **kw)
