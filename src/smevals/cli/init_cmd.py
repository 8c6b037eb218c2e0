"""`smevals init`."""

from __future__ import annotations

from pathlib import Path

import click

from smevals.cli.base import cli


class _ListsExamples(click.Command):
    """Ends its help with the shipped examples (read only when the help is shown)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from smevals.commands.init import shipped_examples

        with formatter.section("Examples (--example NAME)"):
            formatter.write_dl(shipped_examples())
        super().format_epilog(ctx, formatter)


@cli.command("init", cls=_ListsExamples,
             short_help="Create a new Eval, or copy a shipped example suite.")
@click.argument("directory", type=click.Path(file_okay=False), metavar="DIRECTORY")
@click.option("--example", metavar="NAME",
              help="Copy this shipped example suite (listed below) instead.")
def init_cmd(directory: str, example: str | None) -> None:
    """Create a new Eval in DIRECTORY that validates and runs at once, or with --example a
    copy of a shipped example suite, e.g. `smevals init --example haiku my-eval`."""
    from smevals.commands.init import init_eval

    written = init_eval(Path(directory), example)
    for rel in written:
        click.echo(f"  {Path(directory) / rel}")
    click.echo(f"Created {directory}. Next: smevals run {directory} -g && "
               f"smevals report {directory}")

