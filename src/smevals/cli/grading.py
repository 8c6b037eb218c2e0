"""What `smevals grade` and `smevals regrade` share: their filters, their progress display,
their summary and their exit."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from smevals.cli.base import non_empty, store_option
from smevals.cli.options import cluster_spec, scale_options
from smevals.cli.progress import Progress, score_shown, sigterm_as_interrupt, tampering_shown
from smevals.errors import EvidenceFailed, Exit, SmevalsError

if TYPE_CHECKING:
    from smevals.commands.grade import GradeOptions, GradeSummary
    from smevals.errors import Problem
    from smevals.evaldef.model import Eval
    from smevals.grade.apply import GradeResult


def filter_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Filters shared by grade and regrade."""
    options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        click.option("-t", "--task", "tasks", metavar="TASK",
                     multiple=True, help="Only Runs of this task."),
        click.option("-m", "--model", "models", metavar="MODEL",
                     multiple=True, callback=non_empty, help="Only Runs of this model."),
        click.option("-c", "--config", "configs", metavar="CONFIG",
                     multiple=True, help="Only Runs of this config."),
        click.option("--run", "runs", metavar="ID",
                     multiple=True, help="Only this Run (id or prefix)."),
        click.option("--since", metavar="DATE",
                     help="Only Runs started at or after this date (ISO)."),
        click.option("--outcome", type=click.Choice(["pass", "fail", "error"]),
                     help="Only Runs whose newest Grade has this outcome."),
        click.option("--from-version", metavar="VERSION",
                     help="Only Runs whose newest Grade is of this grader "
                     "version (prefix)."),
        click.option("-g", "--grader", metavar="GRADER",
                     default="default", show_default=True, help="Grader name."),
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=4, show_default=True,
                     metavar="N", help="Runs graded at once."),
        click.option("--no-judge-cache", "judge_cache", is_flag=True, default=True,
                     flag_value=False, help="Ask model judges afresh instead of answering "
                     "from the judge cache in the store (the fresh answers are served "
                     "from then on)."),
        click.option("--include-stale", is_flag=True,
                     help="Grade stale Runs too (made from an older task, config or runner; "
                     "reports leave them out)."),
        click.option("--dry-run", is_flag=True, help="Say how many Runs would be graded and "
                     "how many judge calls that takes (and how many the cache serves); "
                     "grade nothing."),
        store_option,
        scale_options,
    ]
    for option in reversed(options):
        f = option(f)
    return f


class GradeText:
    def __init__(self, regrade: bool = False, dry_run: bool = False) -> None:
        self.progress = Progress("grade")
        self.regrade, self.dry_run = regrade, dry_run

    def start(self, ev: Eval, version: str, total: int) -> None:
        click.echo(f"{ev.name}: grading {total} Run(s) with grader version {version}")
        self.progress.start(total)

    def warn(self, problem: Problem) -> None:
        click.echo(problem.render(), err=True)

    def done(self, result: GradeResult) -> None:
        rec = result.run.record
        line = (f"{rec['task']['name']} / {rec['config']['name']} / {rec['model']} "
                f"{result.run.id} ... {result.outcome}{score_shown(result)}")
        if result.why:
            line += f"\n    {result.why}"
        line += tampering_shown(result)
        self.progress.step(result.outcome == "pass", line)

    def finished(self, ev: Eval, summary: GradeSummary) -> None:
        """One Eval of several is done: its own counts, each line headed by its name."""
        self.progress.close()
        self.progress.total = 0          # the bar is closed: the last close() adds nothing
        for line in summary_lines(summary, self.regrade, self.dry_run):
            click.echo(f"{ev.name}: {line}")


def run_grading(regrade: bool, paths: tuple[str, ...], **kw: Any) -> None:
    """`grade` (regrade False) or `regrade` (True) of the Runs the options select."""
    from smevals.commands.grade import GradeOptions, grade_command

    cluster = cluster_spec(kw.pop("dask"), kw.pop("dask_resources"))
    opts = GradeOptions(paths=paths, regrade=regrade, cluster=cluster, **kw)
    ui = GradeText(regrade, opts.dry_run)
    try:
        with sigterm_as_interrupt():
            summary = grade_command(opts, ui)
    finally:
        ui.progress.close()
    _report(summary, opts)


def _dry_lines(s: GradeSummary) -> list[str]:
    shared = (f", {s.judge_shared} the same as another (asked once)" if s.judge_shared
              else "")
    lines = [f"Would grade {s.planned} Run(s); judge calls: {s.judge_calls} "
             f"({s.judge_cached} from the judge cache{shared}, "
             f"{s.judge_calls - s.judge_cached - s.judge_shared} to make)"]
    if s.up_to_date:
        lines.append(f"Skipped {s.up_to_date} Run(s) already graded by this grader version")
    return lines + _damaged_lines(s) + _stale_lines(s)


def _damaged_lines(s: GradeSummary) -> list[str]:
    if s.damaged:
        return [f"Skipped {s.damaged} damaged Run(s) (named below; see `smevals verify`)"]
    return []


def _stale_lines(s: GradeSummary) -> list[str]:
    if s.skipped_stale:
        return [f"Skipped {s.skipped_stale} stale Run(s); --include-stale grades them"]
    return []


def summary_lines(s: GradeSummary, regrade: bool, dry_run: bool = False) -> list[str]:
    """What `grade` says at the end: for one Eval, or the total over several."""
    if dry_run:
        return _dry_lines(s)
    errors = f", {s.errored} error" if s.errored else ""
    lines = [f"Graded {s.graded} Run(s): {s.passed} pass, {s.failed} fail{errors}"]
    if s.retried:
        lines.append(f"{s.retried} Run(s) graded again: their current Grade was an error "
                     "(no verdict)")
    if s.up_to_date:
        lines.append(f"Skipped {s.up_to_date} Run(s) already graded by this grader version")
    if s.skipped_failed_runs:
        lines.append(f"Skipped {s.skipped_failed_runs} failed Run(s)")
    lines += _damaged_lines(s) + _stale_lines(s)
    if s.new_version and not regrade:
        lines.append(f"{s.new_version} Run(s) graded again: they had Grades only from older "
                     "grader versions (the old Grades are kept)")
    if s.new_grading and not regrade:
        lines.append(f"{s.new_grading} Run(s) graded again: same grader version, but their "
                     "Task's grading data (answer key) changed (the old Grades are kept)")
    if s.flips_to_fail or s.flips_to_pass or s.score_changes:
        line = (f"Against each Run's previous Grade: {s.flips_to_fail} pass->fail, "
                f"{s.flips_to_pass} fail->pass")
        if s.score_changes:
            mean = sum(s.score_changes) / len(s.score_changes)
            line += (f", mean score change {mean:+.3f} over {len(s.score_changes)} scored "
                     "Run(s)")
        lines.append(line)
    return lines


def _report(s: GradeSummary, opts: GradeOptions) -> None:
    """The summary (with several Evals, `Total over N Evals:` and the sums), then the exit."""
    if s.evals > 1:
        click.echo(f"Total over {s.evals} Evals:")
    for line in summary_lines(s, opts.regrade, opts.dry_run):
        click.echo(line)
    if opts.dry_run:
        return
    if s.interrupted:
        click.echo(f"Interrupted after grading {s.graded} of {s.planned} Run(s): the Grades "
                   "above are kept; `smevals grade` grades the rest.", err=True)
        raise Exit(130)
    if s.errored:
        raise SmevalsError(_errored(s))
    if s.failed:
        raise EvidenceFailed(f"{s.failed} of {s.graded} Run(s) graded as fail")


def _errored(s: GradeSummary) -> str:
    judged = s.errored - s.no_check
    texts = [f"{judged} of {s.graded} Grade(s) have no verdict (outcome error: a judge or "
             "webhook could not answer, see above); `smevals grade` tries them again"] \
        if judged else []
    if s.no_check:
        texts.append(f"{s.no_check} of {s.graded} Grade(s) have no verdict (outcome error): no "
                     "Check of the grader applied to their Task (see above)")
    return "; ".join(texts)
