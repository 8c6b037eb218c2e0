"""`smevals check`: run one built-in Check on some text and print the result as JSON (the
work is commands/check.py's)."""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path

import click

from smevals.cli.base import cli
from smevals.errors import EXIT_BAD_INPUT, EXIT_FAILED, Exit


def _output(text: str | None, file: str | None) -> str:
    if text is not None and file is not None:
        raise click.UsageError("give either --output or --output-file, not both")
    if text is not None:
        return text
    if file is None and sys.stdin.isatty():
        raise click.UsageError("give --output TEXT, --output-file FILE, or pipe the output in")
    from smevals.commands.check import read_text

    return read_text(Path(file or "-"), "the output")


@cli.command("check", short_help="Run one built-in Check on some output; print the result as JSON.")
@click.argument("spec_json", metavar="SPEC_JSON")
@click.option("--output", "output_text", metavar="TEXT", help="The output to check.")
@click.option(
    "--output-file", metavar="FILE", help="Read the output from FILE ('-' for stdin, the default)."
)
@click.option("--usage", "usage_json", metavar="JSON", help="The Run's usage record (JSON object).")
@click.option("--task", "task_json", metavar="JSON", help="The Task's keys (JSON object).")
def check_cmd(
    spec_json: str,
    output_text: str | None,
    output_file: str | None,
    usage_json: str | None,
    task_json: str | None,
) -> None:
    """Run one built-in Check on some output and print the result as JSON.

    SPEC_JSON names the checker and its options, e.g. '{"checker": "contains",
    "value": "hello"}' (or @FILE to read it from a file). Exit 0 when the check
    passes, 1 when it fails, 2 for a bad spec or when it got no verdict (a judge or
    webhook error: "error": true).

    \b
    Example:
      smevals check '{"checker": "regex", "pattern": "^4\\\\d$"}' --output 42
    """
    from smevals.commands.check import check_command

    result = check_command(spec_json, partial(_output, output_text, output_file), usage_json,
                           task_json)
    click.echo(json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False))
    if result.get("error"):
        raise Exit(EXIT_BAD_INPUT)
    if not result["ok"]:
        raise Exit(EXIT_FAILED)
