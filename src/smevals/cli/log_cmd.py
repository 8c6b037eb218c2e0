"""`smevals log`."""

from __future__ import annotations

import click

from smevals.cli.base import cli, evals_argument
from smevals.cli.options import side_options, write_output


@cli.command("log", short_help="Each commit's figures per config x model, along git history.")
@evals_argument(required=False)
@side_options
@click.option("-n", "--max-count", "n", type=click.IntRange(min=1), metavar="N",
              help="List at most N commits (the newest).")
@click.option("--since", "since_rev", metavar="REV",
              help="Only commits after the revision REV (git log REV..HEAD).")
@click.option("--first-parent", is_flag=True,
              help="Follow only the first parent of merge commits.")
@click.option("--all", "every", is_flag=True,
              help="Also the Evals deleted (or moved) before HEAD, each up to its deletion.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "csv", "markdown"]),
              default="text", show_default=True, help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the history to this file instead of standard output.")
def log_cmd(paths: tuple[str, ...], grader: str, tasks: tuple[str, ...],
            models: tuple[str, ...], configs: tuple[str, ...], include_stale: bool,
            store: str | None, n: int | None, since_rev: str | None, first_parent: bool,
            every: bool, fmt: str, output: str | None) -> None:
    """List, newest first, every commit of HEAD that changed the Evals (or Suites) or their
    results, and per config x model the figures `report --rev COMMIT` gives there: mean
    score and pass rate with 95% intervals, the Runs counted, the grader version. Where the
    grader version, a runner, a config or the Tasks changed since that pair's previous
    listed commit, it says so, as `diff` does. A commit that changed only a file outside
    an Eval's folder that it uses (a shared runner or checker program, a database) is
    listed too. Read straight out of git (no checkout).

    \b
      smevals log                       every Eval under .
      smevals log evals/qa -n 20        the last 20 commits that changed evals/qa
      smevals log --since v1.0 --format json
      smevals log --all                 deleted Evals too, up to their deletion
    """
    from smevals.commands.log import log_command
    from smevals.history.load import HistoryOptions
    from smevals.report.rows import Filters
    from smevals.sides.read import SideSpec

    spec = SideSpec(grader, None, store, filters=Filters(tasks, models, configs),
                    include_stale=include_stale)
    opts = HistoryOptions(paths or (".",), spec, n, since_rev, first_parent, every)
    write_output(log_command(opts, fmt), output)
