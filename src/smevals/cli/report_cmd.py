"""`smevals report`."""

from __future__ import annotations

import click

from smevals.cli.base import cli, evals_argument
from smevals.cli.options import side_options, task_pass_option, write_output
from smevals.errors import EvidenceFailed


@cli.command("report", short_help="Summarise graded Runs: leaderboard, pass rates, tags, metrics.")
@evals_argument()
@side_options
@click.option("--by-task", is_flag=True, help="Add each task's score to the per-model blocks.")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json", "csv", "junit"]),
              default="markdown", show_default=True, help="Output format.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--csv-lines", type=click.Choice(["runs", "checks", "summary"]),
              help="With --format csv, one line per: graded Run (the default), Check of a "
              "config x model, or config x model of an Eval.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the report to this file instead of standard output.")
@click.option("--rev", metavar="REV", help="Report the store as committed at this git revision.")
@click.option("--grader-version", "version", metavar="VERSION",
              help="Count the newest Grade of this grader version (prefix) instead.")
@click.option("--any-version", is_flag=True, help="Count the newest Grade of any version.")
@click.option("--fail-under", metavar="SCORE",
              help="Exit 1 when a config x model's mean score is below SCORE.")
@click.option("--min-pass-rate", metavar="RATE",
              help="Exit 1 when a config x model's pass rate is below RATE (0.8 or 80%).")
@task_pass_option
@click.option("--allow-incomplete", is_flag=True,
              help="Let the gates pass even while current Runs are ungraded or their Grade "
              "is an error (by default that fails every gate).")
@click.option("--agreement", metavar="GRADER[:VERSION]",
              help="Instead: how far this grader agrees with --against on the Runs both "
              "graded (accuracy, Cohen's kappa, confusion matrix, disagreements).")
@click.option("--against", metavar="human|GRADER[:VERSION]", default="human",
              show_default=True, help="The other side of --agreement.")
def report_cmd(paths: tuple[str, ...], grader: str, tasks: tuple[str, ...],
               models: tuple[str, ...], configs: tuple[str, ...], include_stale: bool,
               store: str | None, by_task: bool, fmt: str, as_json: bool,
               csv_lines: str | None, output: str | None,
               rev: str | None, version: str | None, any_version: bool,
               fail_under: str | None, min_pass_rate: str | None, task_pass: str,
               allow_incomplete: bool, agreement: str | None, against: str) -> None:
    """Summarise the graded Runs of each Eval (or Suite): leaderboard of config x model,
    pass rates with 95% intervals, tags, repeats, metrics.

    By default the newest Grade of the current grader version (and current answer keys)
    counts for each Run; failed Runs, ungraded Runs and stale Runs are counted and left
    out. Gates (--fail-under, --min-pass-rate) exit 1 when any config x model falls below,
    or while current Runs are ungraded or their Grade is an error (--allow-incomplete).
    """
    from smevals.commands.report import ReportOptions, report_command
    from smevals.report.rows import Filters
    from smevals.sides.read import SideSpec

    if as_json and fmt not in ("markdown", "json"):
        raise click.UsageError("--json and --format exclude each other")
    if agreement:
        _agreement(paths, agreement, against, (tasks, models, configs), store,
                   "json" if as_json else fmt, output, rev)
        return
    spec = SideSpec(grader, rev, store, version, any_version,
                    Filters(tasks, models, configs), include_stale)
    opts = ReportOptions(paths, spec, "json" if as_json else fmt, by_task, fail_under,
                         min_pass_rate, allow_incomplete, task_pass, csv_lines)
    result = report_command(opts)
    write_output(result.text, output)
    if result.gate_failures:
        raise EvidenceFailed("gate failed:\n  " + "\n  ".join(result.gate_failures))


def _agreement(paths: tuple[str, ...], grader: str, against: str,
               filters: tuple[tuple[str, ...], ...], store: str | None, fmt: str,
               output: str | None, rev: str | None) -> None:
    from smevals.commands.report import agreement_command
    from smevals.report.rows import Filters

    if rev:
        raise click.UsageError("--agreement reads the working tree; --rev is not supported "
                               "with it")
    write_output(agreement_command(paths, grader, against, Filters(*filters), store, fmt),
                 output)
