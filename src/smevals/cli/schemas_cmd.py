"""`smevals schemas`: the JSON Schemas of the files an author writes, for editors (the work
is commands/schemas.py's)."""

from __future__ import annotations

from pathlib import Path

import click

from smevals.cli.base import cli


@cli.command("schemas", short_help="Write the JSON Schemas of Eval files, for editors.")
@click.option("--write", "folder", required=True, metavar="DIR",
              type=click.Path(file_okay=False),
              help="Write the schemas of eval, task, config, grader and fixture files here.")
@click.argument("paths", nargs=-1, type=click.Path(), metavar="[EVAL_OR_SUITE]...")
def schemas_cmd(folder: str, paths: tuple[str, ...]) -> None:
    """Write the JSON Schemas of the files an author writes into DIR, so that an editor
    (VS Code's YAML extension, any yaml-language-server) checks and completes them offline.
    With EVAL_OR_SUITE, also point the first-line comment `# yaml-language-server:
    $schema=...` of their YAML files at DIR, by paths relative to each file (files without
    that comment are left as they are). `smevals init` does both in a new Eval, with DIR
    `.smevals/schemas`."""
    from smevals.commands.schemas import write_for_editors

    written, changed = write_for_editors(Path(folder), list(paths))
    for path in written + changed:
        click.echo(f"  {path}")
    if paths:
        click.echo(f"Pointed {len(changed)} YAML file(s) at {folder}")
