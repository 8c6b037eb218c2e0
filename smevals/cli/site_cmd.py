"""`smevals build` and `smevals serve`: the web report."""

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
    from smevals.commands.site import SiteOptions, build_command

    opts = SiteOptions(paths, grader, store, rev, task_pass, history)
    for line in build_command(opts, out, diff):
        click.echo(line)


@cli.command("serve", short_help="Serve the web report of Evals or Suites, live.")
@click.argument("paths", nargs=-1, required=True, type=click.Path(), metavar="EVAL_OR_SUITE...")
@click.option("-p", "--port", metavar="PORT",
              type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port (0: any free port).")
@click.option("--host", metavar="HOST", default="127.0.0.1", show_default=True,
              help="Address to listen on. Model output is untrusted: keep it local.")
@click.option("-g", "--grader", metavar="GRADER", default="default", show_default=True,
              help="Grader whose Grades count.")
@click.option("--history", metavar="N", type=int,
              help="Commits on the History page (default 20 in a git repository; 0: none).")
@store_option
def serve_cmd(paths: tuple[str, ...], port: int, host: str, grader: str,
              history: int | None, store: str | None) -> None:
    """Serve the web report of each Eval (or Suite), live: Runs and Grades that land while
    it is open appear without a restart. Ctrl-C stops it."""
    from smevals.commands.site import SiteOptions, serve_command

    serve_command(SiteOptions(paths, grader, store, history=history), host, port,
                  lambda line: click.echo(line, err=False))
