"""`smevals validate`."""

from __future__ import annotations

import click
import orjson

from smevals.cli.base import cli, evals_argument
from smevals.errors import EXIT_BAD_INPUT, Exit


@cli.command("validate", short_help="Check Evals or Suites against the schemas and across files.")
@evals_argument()
@click.option("--json", "as_json", is_flag=True, help="Print the problems (and counts) as JSON.")
def validate_cmd(paths: tuple[str, ...], as_json: bool) -> None:
    """Check Evals (or every Eval in Suites) against the schemas and across files.

    Lists every problem as path:line:col: message and exits 2, or prints a one-line
    summary and exits 0. Warnings (e.g. a Task key that looks misspelt) never change the
    exit code.
    """
    from smevals.commands.validate import validate_paths

    summary = validate_paths(list(paths))
    if as_json:
        doc = {
            "ok": not summary.problems,
            "evals": summary.evals, "tasks": summary.tasks,
            "configs": summary.configs, "graders": summary.graders,
            "problems": [p.as_dict() for p in summary.problems],
            "warnings": [w.as_dict() for w in summary.warnings],
        }
        click.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
    elif summary.problems:
        for problem in summary.problems + summary.warnings:
            click.echo(problem.render(), err=True)
        n, w = len(summary.problems), len(summary.warnings)
        more = f" (and {w} warning{'' if w == 1 else 's'})" if w else ""
        click.echo(f"{n} problem{'' if n == 1 else 's'} found{more}", err=True)
    else:
        for warning in summary.warnings:
            click.echo(warning.render(), err=True)
        click.echo(summary.line())
    if summary.problems:
        raise Exit(EXIT_BAD_INPUT)
