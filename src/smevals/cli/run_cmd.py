"""`smevals run`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from smevals.cli.base import cli, evals_argument, non_empty, store_option
from smevals.cli.options import cluster_spec, scale_options
from smevals.cli.progress import Progress, score_shown, sigterm_as_interrupt, tampering_shown
from smevals.errors import EvidenceFailed, Exit, SmevalsError

if TYPE_CHECKING:
    from smevals.commands.grade import AfterRun
    from smevals.commands.run import RunSummary
    from smevals.errors import Problem
    from smevals.evaldef.model import Eval
    from smevals.grade.apply import GradeResult
    from smevals.run.attempt import Attempt
    from smevals.run.plan import PairPlan
    from smevals.run.shard import Shard
    from smevals.run.subset import Subset
    from smevals.store.write import Written


def _grader_value(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`-g` takes an optional value but never swallows an Eval path: `-g EVAL` means
    `-g default EVAL`."""
    if value and value != "default" and os.path.isdir(value):
        ctx.meta.setdefault("smevals_extra_paths", []).append(value)
        return "default"
    return value


class TextUI:
    def __init__(self) -> None:
        self.progress = Progress("run")

    def plan(self, ev: Eval, config: str, pairs: list[PairPlan], jobs: int,
             chosen: str = "") -> None:
        self._header(ev, config, pairs, jobs, chosen)

    def _header(self, ev: Eval, config: str, pairs: list[PairPlan], jobs: int,
                chosen: str) -> None:
        if chosen:
            click.echo(f"{ev.name}: {chosen}")
        have = sum(1 for p in pairs if p.existing)
        stale = sum(p.stale for p in pairs)
        why = _reasons(pairs)
        more = f"; {stale} stale Run(s) not counted: {why}" if stale else ""
        click.echo(f"{ev.name}: {jobs} Run(s) to make with config '{config}' "
                   f"({len(pairs)} task/model pair(s), {have} with earlier Runs of the same "
                   f"inputs{more})")

    def dry(self, ev: Eval, config: str, pairs: list[PairPlan], jobs: int,
            chosen: str = "") -> None:
        self._header(ev, config, pairs, jobs, chosen)
        for p in pairs:
            have = (f"{p.existing} current Run(s) + {p.stale} stale ({_reasons([p])})"
                    if p.stale else f"{p.existing} Run(s) exist")
            click.echo(f"  {p.task} / {config} / {p.model}: {have}, would run {p.wanted}")

    def start(self, total: int) -> None:
        self.progress.start(total)

    def warn(self, problem: Problem) -> None:
        click.echo(problem.render(), err=True)

    def done(self, item: Attempt, grade: GradeResult | None) -> None:
        rec = item.record
        failure = rec.get("failure")            # a failed Run always says why
        status = "ok" if item.ok else f"FAILED ({failure['detail'] if failure else ''})"
        line = (f"{rec['task']['name']} / {rec['config']['name']} / {rec['model']} ... {status} "
                f"({rec['duration_seconds']:.1f}s) -> {item.written.id}")
        if not item.ok:
            line += "".join(f"\n    {text}" for text in failure_lines(item.written))
        if grade is not None:
            line += f"\n    grade: {grade.outcome}{score_shown(grade)}"
            if grade.why:
                line += f"\n    {grade.why}"
            line += tampering_shown(grade)
        self.progress.step(item.ok, line, explain=grade is not None and grade.outcome != "pass")

    def leftover(self, grade: GradeResult) -> None:
        rec = grade.run.record
        click.echo(f"{rec['task']['name']} / {rec['config']['name']} / {rec['model']} "
                           f"{grade.run.id} (no current Grade) ... grade: {grade.outcome}"
                           f"{score_shown(grade)}")


def _reasons(pairs: list[PairPlan]) -> str:
    """What made earlier Runs stale, in a fixed order: task edited, config changed, ..."""
    from smevals.run.plan import REASONS

    found = {reason for p in pairs for reason in p.why}
    return ", ".join(reason for reason in REASONS if reason in found)


def failure_lines(written: Written) -> list[str]:
    """What a failed Run's line adds: the end of its stderr, and how to see the rest."""
    from smevals.evaldef.load import display_path
    from smevals.run.text import tail

    lines, total = tail(written.path / "stderr.txt")
    if not lines:
        out = ["stderr: (empty)"]
    else:
        head = "stderr:" if total <= len(lines) else f"stderr (last {len(lines)} lines):"
        out = [head] + [f"| {text}" for text in lines]
    root = written.path.parents[written.rel.count("/")]
    return out + [f"see: smevals show {written.id} {display_path(root)}"]


@cli.command("run", short_help="Attempt every Task of Evals or Suites with a Config's Runner.")
@evals_argument(required=False, shown_required=True)
@click.option("-m", "--model", "models", metavar="MODEL",
              multiple=True, callback=non_empty, help="Model to run (repeatable). "
              "Default: the config's model.")
@click.option("-c", "--config", "configs", metavar="CONFIG", multiple=True,
              help="Config name (repeatable: each in turn). Default: the Eval's `configs` "
              "(eval.yaml), else default.")
@click.option("-t", "--task", "tasks", metavar="TASK",
              multiple=True, help="Only this task (repeatable).")
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
              help="Only the first N Tasks of each Eval (in task order, after -t).")
@click.option("--sample", type=click.IntRange(min=1), default=None, metavar="N",
              help="Only N Tasks of each Eval, chosen by --seed (the same on every machine).")
@click.option("--seed", default=None, metavar="S",
              help="The seed of --sample (any text; default 0).")
@click.option("-n", "--repeat", type=click.IntRange(min=1), default=None, metavar="N",
              help="Top each task/model pair up to N successful Runs with the same inputs.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=4, show_default=True, metavar="N",
              help="Runners at once (with --dask: one per worker thread instead).")
@click.option("--timeout", metavar="SECONDS",
              type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds per Run (default: the config's timeout, else none).")
@click.option("-g", "--grader", metavar="GRADER", default=None, is_flag=False, flag_value="default",
              callback=_grader_value, help="Grade each Run as it finishes (bare -g: default).")
@click.option("--dry-run", is_flag=True, help="List what would run, run nothing.")
@scale_options
@store_option
@click.pass_context
def run_cmd(ctx: click.Context, paths: tuple[str, ...], models: tuple[str, ...],
            configs: tuple[str, ...], tasks: tuple[str, ...], limit: int | None,
            sample: int | None, seed: str | None, repeat: int | None, jobs: int,
            timeout: float | None,
            grader: str | None, dry_run: bool, store: str | None, shard: Shard | None,
            dask: str | None,
            dask_resources: tuple[str, ...]) -> None:
    """Attempt every Task of each Eval (or Suite) with a Config's Runner, for each model.

    A Run whose runner exits non-zero is kept as a failed Run (never graded, not counted by
    -n). Ctrl-C stops launching, ends running runners and keeps every finished Run.
    """
    from smevals.commands.run import RunOptions, run_command

    paths = tuple(ctx.meta.get("smevals_extra_paths", [])) + paths
    if not paths:
        raise click.UsageError("Missing argument 'EVAL_OR_SUITE...': give an Eval or a Suite.")
    opts = RunOptions(paths, models, None, tasks, repeat, jobs, timeout, store, dry_run,
                      grader, shard, None if dry_run else cluster_spec(dask, dask_resources),
                      configs=configs, subset=_subset(limit, sample, seed))
    ui = TextUI()
    if dry_run:
        ui.plan = ui.dry  # type: ignore[method-assign]
    try:
        with sigterm_as_interrupt():
            summary = run_command(opts, ui, _grade_hook() if grader else None)
    finally:
        ui.progress.close()
    _finish(summary, dry_run)


def _subset(limit: int | None, sample: int | None, seed: str | None) -> Subset:
    from smevals.run.subset import Subset

    if limit is not None and sample is not None:
        raise click.UsageError("--limit and --sample cannot be used together: choose one.")
    if seed is not None and sample is None:
        raise click.UsageError("--seed needs --sample N (it chooses which N Tasks).")
    return Subset(limit, sample, "0" if seed is None else seed)


def _grade_hook() -> AfterRun:
    from smevals.commands.grade import AfterRun

    return AfterRun()


def _finish(summary: RunSummary, dry_run: bool) -> None:
    if dry_run:
        return
    click.echo(f"{summary.ok} ok, {summary.failed} failed")
    if summary.interrupted:
        click.echo("Interrupted: the Runs above are kept; run the same command again "
                   "(with -n) to resume.", err=True)
        raise Exit(130)
    problems = []
    if summary.failed:
        problems.append(f"{summary.failed} run(s) failed")
    if summary.graded_fail:
        problems.append(f"{summary.graded_fail} run(s) graded as fail")
    judged = summary.graded_error - summary.graded_no_check
    if judged:
        problems.append(f"{judged} Grade(s) have no verdict (outcome error: a "
                        "judge or webhook could not answer); `smevals grade` tries them again")
    if summary.graded_no_check:
        problems.append(f"{summary.graded_no_check} Grade(s) have no verdict (outcome error): "
                        "no Check of the grader applied to their Task")
    if summary.graded_error:
        raise SmevalsError(", ".join(problems))
    if problems:
        raise EvidenceFailed(", ".join(problems))
