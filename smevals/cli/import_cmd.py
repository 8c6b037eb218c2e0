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
    become Configs (prompt_template, the smevals:openai runner), listed in eval.yaml so that
    `smevals run DIR` runs them all; tests become tasks/tests.jsonl, assertions become
    Checks in graders/default.yaml. Each assertion not kept exactly (kept by another rule,
    or not imported) is listed with its file and line, as is everything else left out, at
    the end and in DIR/README.md. A file:// outside the config's folder is refused."""
    from smevals.importers.pf_report import console_lines
    from smevals.importers.promptfoo import import_promptfoo

    done = import_promptfoo(Path(config), Path(out))
    grader = f"grader 'default' with {done.checks} Check(s)" if done.checks else "no grader"
    click.echo(f"Imported {config} into {out}: {done.tasks} Task(s) in tasks/tests.jsonl, "
               f"{len(done.configs)} Config(s) ({', '.join(done.configs) or 'none'}), {grader}")
    for line in console_lines(done, str(Path(out) / "README.md")):
        click.echo(line)
    models = all(plan.doc.get("model") for plan in done.plans.values())
    click.echo(f"Next: smevals validate {out} && smevals run {out} --dry-run"
               + ("" if models else " -m MODEL"))


@import_group.command("inspect", short_help="An Eval from an Inspect dataset (CSV, JSON, JSONL).")
@click.argument("source", type=click.Path(dir_okay=False), metavar="FILE")
@click.argument("out", type=click.Path(file_okay=False), metavar="DIR")
@click.option("--scorer", default="includes()", show_default=True, metavar="SCORER",
              help="The task's scorer, as written in Python: includes(), "
                   "match(location=\"end\", numeric=True), exact(), choice(), "
                   "model_graded_fact(), model_graded_qa().")
@click.option("--solver", default=None, metavar="SOLVER",
              help="multiple_choice(multiple_correct=..., cot=...) or generate() (choice() "
                   "implies multiple_choice()).")
@click.option("--system", default=None, metavar="TEXT",
              help="The task's system_message(), as the Config's system prompt.")
def import_inspect_cmd(source: str, out: str, scorer: str, solver: str | None,
                       system: str | None) -> None:
    """Turn an Inspect dataset (samples with input, target, id, metadata, choices) and the
    task's scorer into an Eval in DIR (new or empty): one Task per sample in
    tasks/<stem>.jsonl (a chat input kept as messages, target as the grading key
    `expected`), a smevals:openai config stub and a grader whose Check decides as the scorer
    does. Samples without a target are named (no Check applies to them)."""
    from smevals.importers.inspect import import_inspect, notes

    done = import_inspect(Path(source), Path(out), scorer, solver, system)
    click.echo(f"Imported {source} into {out}: {done.tasks} Task(s) in {done.data_file}, "
               "config 'default' (a stub: give it a model), grader 'default'")
    for note in notes(done, scorer):
        click.echo(f"  {note}")
    click.echo(f"Next: smevals validate {out} && smevals run {out} --dry-run -m MODEL")
