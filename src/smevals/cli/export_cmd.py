"""`smevals export`."""

from __future__ import annotations

import click

from smevals.cli.base import cli, evals_argument
from smevals.cli.options import side_options


@cli.command("export", short_help="Tables of the Runs and Checks report counts: Parquet, CSV or "
             "JSON lines.")
@evals_argument()
@side_options
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv", "jsonl"]),
              default="parquet", show_default=True,
              help="File format (parquet needs the analysis extra: pandas and pyarrow).")
@click.option("-o", "--output", "out", type=click.Path(file_okay=False), default=".",
              show_default=True, help="Write the files into this folder (made when missing).")
@click.option("--rev", metavar="REV", help="Read the store as committed at this git revision.")
@click.option("--grader-version", "version", metavar="VERSION",
              help="Count the newest Grade of this grader version (prefix) instead.")
@click.option("--any-version", is_flag=True, help="Count the newest Grade of any version.")
@click.option("--history", "history", type=click.IntRange(min=1), metavar="N",
              help="Also write history.FORMAT: `smevals log -n N`'s figures per commit.")
def export_cmd(paths: tuple[str, ...], grader: str, tasks: tuple[str, ...],
               models: tuple[str, ...], configs: tuple[str, ...], include_stale: bool,
               store: str | None, fmt: str, out: str, rev: str | None,
               version: str | None, any_version: bool, history: int | None) -> None:
    """Write the tables of `smevals.runs_df` and `smevals.checks_df` (and with --history,
    `smevals.history_df`), one file each: runs.FORMAT (one row per Run: the Grade that
    counts, its outcome and score, usage, Task keys), checks.FORMAT (one row per Check of
    the Grades that count) and history.FORMAT. The same rules as `report`: which Grade
    counts, stale and failed Runs left out (and listed, with why), damaged objects left out.

    \b
      smevals export evals/qa                   runs.parquet, checks.parquet here
      smevals export evals --format csv -o out  CSV files in out/
      duckdb -c "SELECT model, avg(passed) FROM 'runs.parquet' GROUP BY model"
    """
    from smevals.analysis.read import selection
    from smevals.commands.export import ExportOptions, export_command

    sel = selection(paths, rev=rev, grader=grader, grader_version=version,
                    any_version=any_version, include_stale=include_stale, tasks=tasks,
                    models=models, configs=configs, store=store)
    for line in export_command(ExportOptions(sel, fmt, out, history)):
        click.echo(line)
