"""`smevals import ai-eval-forge`, `smevals import promptfoo` and `smevals import inspect`:
Evals from other tools' files (the work is commands/import_.py's)."""

from __future__ import annotations

import click

from smevals.cli.base import cli, store_option


@cli.group("import")
def import_group() -> None:
    """Bring another tool's files along as an Eval."""


@import_group.command("ai-eval-forge",
                      short_help="An Eval, with its Runs, from an ai-eval-forge case file.")
@click.argument("cases", type=click.Path(dir_okay=False), metavar="CASE_FILE")
@click.option("-o", "--output", "out", type=click.Path(file_okay=False),
              help="The Eval folder to create (default: the case file's name, here).")
@click.option("--model", metavar="MODEL", default="imported", show_default=True,
              help="The model name the imported Runs are recorded under.")
@store_option
def import_forge_cmd(cases: str, out: str | None, model: str, store: str | None) -> None:
    """Turn an ai-eval-forge case file (JSON array or JSONL) into an Eval: one Task per
    case, one Run per case recorded from its `actual`, and a grader that scores each Run
    as ai-eval-forge scores the case. Then: smevals grade DIR && smevals report DIR."""
    from functools import partial

    from smevals.commands.import_ import forge
    from smevals.commands.run import record_runs

    for line in forge(cases, out, model, partial(record_runs, store=store)):
        click.echo(line)


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
    from smevals.commands.import_ import promptfoo

    for line in promptfoo(config, out):
        click.echo(line)


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
    from smevals.commands.import_ import inspect

    for line in inspect(source, out, scorer, solver, system):
        click.echo(line)
