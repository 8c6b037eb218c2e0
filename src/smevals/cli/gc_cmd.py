"""`smevals gc`: leftovers of interrupted writes removed, and on request superseded or
errored Grades and judge cache entries (the work is commands/gc.py's)."""

from __future__ import annotations

import click

from smevals.cli.base import cli, evals_argument, store_option


@cli.command("gc", short_help="Remove leftovers of interrupted writes (and superseded Grades).")
@evals_argument(required=False)
@click.option("--dry-run", is_flag=True, help="Print what would be removed; remove nothing.")
@click.option("--superseded", is_flag=True,
              help="Also remove Grades whose grader version is not the current one, and "
              "errored Grades a later verdict of the same version replaced.")
@click.option("--errored", is_flag=True,
              help="Also remove errored Grades (no verdict) a later verdict of the same "
              "grader version replaced; keep the rest.")
@click.option("--judge-cache", is_flag=True,
              help="Also remove judge cache entries (all, or those the filters below "
              "select); the next grade asks those requests again.")
@click.option("--older-than", metavar="DURATION",
              help="With --judge-cache: only entries stored longer ago than this (90d, 12h, "
              "1d12h; units s m h d w).")
@click.option("--grader", metavar="GRADER",
              help="With --judge-cache: only entries the Grades of this grader asked for.")
@click.option("--model", metavar="MODEL",
              help="With --judge-cache: only entries of this judge model.")
@click.option("--grace", metavar="SECONDS",
              type=click.FloatRange(min=0), default=3600.0, show_default=True,
              help="Seconds a staging folder of a live process is left alone.")
@store_option
def gc_cmd(paths: tuple[str, ...], dry_run: bool, superseded: bool, errored: bool,
           judge_cache: bool, older_than: str | None, grader: str | None, model: str | None,
           grace: float, store: str | None) -> None:
    """Remove staging leftovers of interrupted writes (and, on request, superseded or
    retried Grades and judge cache entries)."""
    from smevals.commands.gc import gc_command
    from smevals.grade.evict import JudgeEviction, parse_duration

    judge = None
    if judge_cache:
        judge = JudgeEviction(parse_duration(older_than) if older_than is not None else None,
                              grader, model)
    elif older_than is not None or grader is not None or model is not None:
        raise click.UsageError("--older-than, --grader and --model select judge cache "
                               "entries: use them with --judge-cache")
    report = gc_command(paths, store, dry_run, superseded, grace, errored, judge)
    for line in report.removed:
        click.echo(line)
    click.echo(f"{len(report.removed)} item(s) {'would be ' if dry_run else ''}removed")
