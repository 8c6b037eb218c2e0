"""`smevals init`."""

from __future__ import annotations

from pathlib import Path

import click

from smevals.cli.base import cli


@cli.command("init")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--example", help="Copy one of the shipped example suites instead.")
def init_cmd(directory: str, example: str | None) -> None:
    """Create a new Eval in DIRECTORY that validates and runs at once."""
    from smevals.commands.init import init_eval

    written = init_eval(Path(directory), example)
    for rel in written:
        click.echo(f"  {Path(directory) / rel}")
    click.echo(f"Created {directory}. Next: smevals run {directory} -g && "
               f"smevals report {directory}")
