"""`smevals import ai-eval-forge` and `smevals score` (ai-eval-forge compatibility)."""

from __future__ import annotations

from pathlib import Path

import click

from smevals.cli.base import cli, store_option
from smevals.errors import EvidenceFailed


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

    from smevals.commands.run import record_runs
    from smevals.importers.forge import import_forge

    done = import_forge(Path(cases), Path(out) if out else None, model,
                        partial(record_runs, store=store))
    where = done.eval_dir
    click.echo(f"Imported {done.tasks} case(s) from {cases} into {where}: {done.tasks} "
               f"task(s), config 'imported', grader 'default', {done.runs} Run(s) of model "
               f"'{done.model}'")
    click.echo(f"Next: smevals grade {where} && smevals report {where}")


@cli.command("score",
             short_help="Score an ai-eval-forge case file, with its output and exit codes.")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False),
                metavar="FILE...")
@click.option("--format", "fmt", type=click.Choice(["json", "markdown"]),
              help="Output format (default: json; markdown with --compare).")
@click.option("--compare", is_flag=True,
              help="Compare two result files, BEFORE then AFTER, case by case.")
@click.option("--baseline-label", metavar="LABEL",
              help="Name of BEFORE in the comparison (default: its path).")
@click.option("--current-label", metavar="LABEL",
              help="Name of AFTER in the comparison (default: its path).")
def score_cmd(files: tuple[str, ...], fmt: str | None, compare: bool,
              baseline_label: str | None, current_label: str | None) -> None:
    """Score an ai-eval-forge case file in one shot, with ai-eval-forge's output shape
    (summary and cases) and exit codes: 0 all cases pass, 1 any fails, 2 bad input.

    \b
    smevals score cases.jsonl [--format json|markdown]
    smevals score --compare BEFORE.json AFTER.json
    """
    if compare:
        _compare(files, fmt or "markdown", (baseline_label or files[0],
                                            current_label or files[-1]))
        return
    if len(files) != 1:
        raise click.UsageError("give one case file (or --compare BEFORE AFTER)")
    if baseline_label or current_label:
        raise click.UsageError("--baseline-label and --current-label go with --compare")
    from smevals.cases import read_cases, score_cases
    from smevals.cases.scoring import render_json, render_markdown

    doc = score_cases(read_cases(Path(files[0])))
    click.echo(render_markdown(doc) if fmt == "markdown" else render_json(doc), nl=False)
    failed = doc["summary"]["failed"]
    if failed:
        raise EvidenceFailed(f"{failed} of {doc['summary']['total']} case(s) failed")


def _compare(files: tuple[str, ...], fmt: str, labels: tuple[str, str]) -> None:
    if len(files) != 2:
        raise click.UsageError("--compare takes two files: BEFORE AFTER")
    from smevals.cases.compare import compare, failed, load_results, render_markdown
    from smevals.cases.scoring import render_json

    result = compare(load_results(Path(files[0])), load_results(Path(files[1])), labels)
    click.echo(render_markdown(result) if fmt == "markdown" else render_json(result), nl=False)
    if failed(result):
        counts = result["counts"]
        raise EvidenceFailed(f"{counts['regression']} regression(s), {counts['removed']} "
                             "removed case(s)")

