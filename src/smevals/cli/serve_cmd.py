"""`smevals serve`: the web report, live (the work is commands/serve.py's)."""

from __future__ import annotations

import click

from smevals.cli.base import cli, store_option


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
    from smevals.commands.serve import serve_command
    from smevals.site.load import SiteOptions

    serve_command(SiteOptions(paths, grader, store, history=history), host, port,
                  lambda line: click.echo(line, err=False))
