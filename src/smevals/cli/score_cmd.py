"""`smevals score`: an ai-eval-forge case file scored, or two result files compared, with
ai-eval-forge's output and exit codes (the work is commands/score.py's)."""

from __future__ import annotations

import click

from smevals.cli.base import cli
from smevals.errors import EvidenceFailed


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
        if len(files) != 2:
            raise click.UsageError("--compare takes two files: BEFORE AFTER")
        from smevals.commands.score import compare_files

        text, failed = compare_files(files[0], files[1], fmt or "markdown",
                                     (baseline_label or files[0], current_label or files[-1]))
    else:
        if len(files) != 1:
            raise click.UsageError("give one case file (or --compare BEFORE AFTER)")
        if baseline_label or current_label:
            raise click.UsageError("--baseline-label and --current-label go with --compare")
        from smevals.commands.score import score_file

        text, failed = score_file(files[0], fmt == "markdown")
    click.echo(text, nl=False)
    if failed:
        raise EvidenceFailed(failed)
