"""`smevals build`: the static web report (the work is commands/build.py's)."""

from __future__ import annotations

import click

from smevals.cli.base import cli, store_option
from smevals.cli.options import task_pass_option


@cli.command("build", short_help="Write a static web report of Evals or Suites.")
@click.argument("paths", nargs=-1, required=True, type=click.Path(), metavar="EVAL_OR_SUITE...")
@click.option("-o", "--output", "out", default="site", show_default=True,
              type=click.Path(file_okay=False), help="Folder of the site (made or refreshed).")
@click.option("-g", "--grader", metavar="GRADER", default="default", show_default=True,
              help="Grader whose Grades count.")
@click.option("--rev", metavar="REV", help="Show the store as committed at this git revision.")
@click.option("--diff", nargs=2, metavar="A B",
              help="Add a diff page per Eval: the data of `smevals diff A B`.")
@click.option("--history", metavar="N", type=int,
              help="Add a History page per Eval: its last N commits (in a git repository).")
@task_pass_option
@store_option
def build_cmd(paths: tuple[str, ...], out: str, grader: str, rev: str | None,
              diff: tuple[str, str] | None, history: int | None, task_pass: str,
              store: str | None) -> None:
    """Write a self-contained static web report of each Eval (or Suite).

    \b
    It opens from file:// or any static host and makes no network request:
      smevals build suites/ -o site && xdg-open site/index.html
    Building into an existing site adds or refreshes the given Evals and keeps the others.
    """
    from smevals.commands.build import build_command
    from smevals.site.load import SiteOptions

    opts = SiteOptions(paths, grader, store, rev, task_pass, history)
    for line in build_command(opts, out, diff):
        click.echo(line)
