"""`smevals diff`: compare two revisions of each Eval's store (or two grader versions on the
same Runs), reading every side straight from git without a checkout (smevals.diff.pairs)."""

from __future__ import annotations

from smevals.diff.compare import MODES
from smevals.diff.pairs import DiffOptions, DiffResult, diff, split_args
from smevals.errors import SmevalsError
from smevals.report import taskpass
from smevals.store.index import gc_paused

FORMATS = ("markdown", "json")


def _check(opts: DiffOptions, revs: list[str]) -> None:
    if opts.fmt not in FORMATS:
        raise SmevalsError(f"--format: '{opts.fmt}' is not one of {', '.join(FORMATS)}")
    if not 0 < opts.alpha < 1:
        raise SmevalsError(f"--alpha must be between 0 and 1, got {opts.alpha:g}")
    if opts.fail_on is not None and opts.fail_on not in MODES:
        raise SmevalsError(f"--fail-on-regression: '{opts.fail_on}' is not one of "
                           f"{', '.join(MODES)}")
    if opts.task_pass not in taskpass.RULES:
        raise SmevalsError(f"--task-pass: '{opts.task_pass}' is not one of "
                           f"{', '.join(taskpass.RULES)}")
    if opts.grader_versions and len(revs) > 1:
        raise SmevalsError("--grader-versions compares two versions on the Runs of one side: "
                           "give at most one revision")


def diff_command(opts: DiffOptions) -> DiffResult:
    paths, revs = split_args(opts.args)
    _check(opts, revs)
    with gc_paused():
        return diff(opts, paths, revs)
