"""`smevals import promptfoo` and `smevals import inspect`: Evals from other tools' files."""

from __future__ import annotations

from pathlib import Path

import click

from smevals.cli.cases_cmd import import_group


@import_group.command("promptfoo", short_help="An Eval from a promptfoo config.")
@click.argument("config", type=click.Path(dir_okay=False), metavar="PROMPTFOOCONFIG")
@click.argument("out", type=click.Path(file_okay=False), metavar="DIR")
def import_promptfoo_cmd(config: str, out: str) -> None:
    """Turn a promptfoo config into an Eval in DIR (new or empty): prompts × providers
    become Configs (prompt_template, the smevals:openai runner), tests become
    tasks/tests.jsonl, assertions become built-in Checks in graders/default.yaml. What has no
    counterpart is listed at the end, and in DIR/README.md."""
    from smevals.commands.pf_import import import_promptfoo

    done = import_promptfoo(Path(config), Path(out))
    click.echo(f"Imported {config} into {out}: {done.tasks} Task(s) in tasks/tests.jsonl, "
               f"{len(done.configs)} Config(s) ({', '.join(done.configs) or 'none'}), "
               f"grader 'default' with {done.checks} Check(s)")
    if done.skipped:
        click.echo(f"Not imported: {len(done.skipped)} item(s) with no counterpart (also in "
                   f"{Path(out) / 'README.md'}):")
        for item in done.skipped:
            click.echo(f"  {item.line()}")
    else:
        click.echo("Everything was imported.")
    click.echo(f"Next: smevals validate {out} && smevals run {out} --dry-run")
