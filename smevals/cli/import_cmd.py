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
    from smevals.importers.promptfoo import import_promptfoo

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


@import_group.command("inspect", short_help="An Eval from an Inspect dataset (CSV, JSON, JSONL).")
@click.argument("source", type=click.Path(dir_okay=False), metavar="FILE")
@click.argument("out", type=click.Path(file_okay=False), metavar="DIR")
def import_inspect_cmd(source: str, out: str) -> None:
    """Turn an Inspect dataset (samples with input, target, id, metadata) into an Eval in DIR
    (new or empty): one Task per sample in tasks/<stem>.jsonl (target as the grading key
    `expected`), a smevals:openai config stub and a grader checking that the output contains
    the target."""
    from smevals.importers.inspect import import_inspect

    done = import_inspect(Path(source), Path(out))
    click.echo(f"Imported {source} into {out}: {done.tasks} Task(s) in {done.data_file}, "
               "config 'default' (a stub: give it a model), grader 'default'")
    notes = []
    if done.chat:
        notes.append(f"{done.chat} chat input(s): the user messages' text became the prompt")
    if done.renamed:
        notes.append(f"{done.renamed} id(s) changed to be valid, unique Task names")
    if done.without_target:
        notes.append(f"{done.without_target} sample(s) without a target (the grader's Check "
                     "skips them)")
    notes += [f"{count} sample(s) with `{key}`: not imported" for key, count in
              sorted(done.dropped.items())]
    for note in notes:
        click.echo(f"  {note}")
    click.echo(f"Next: smevals validate {out} && smevals run {out} -m MODEL")
