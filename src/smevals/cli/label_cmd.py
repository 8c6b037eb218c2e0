"""`smevals label`: a person's verdict on a Run (the work is commands/label.py's)."""

from __future__ import annotations

import click

from smevals.cli.base import cli, evals_argument, store_option


@cli.command("label", short_help="Record a person's verdict on a Run as a Grade of 'human'.")
@click.argument("run_id", metavar="RUN_ID")
@click.argument("verdict", type=click.Choice(["pass", "fail"]), metavar="pass|fail")
@evals_argument(required=False)
@click.option("--note", metavar="TEXT", default="", help="Why (kept with the label).")
@click.option("--by", "by", metavar="NAME", help="Who labels. Default: git's user.name and "
              "user.email, else the login name.")
@store_option
def label_cmd(run_id: str, verdict: str, paths: tuple[str, ...], note: str, by: str | None,
              store: str | None) -> None:
    """Label a Run pass or fail: writes a new, immutable Grade of the reserved grader
    `human` (who labelled it, when, and the note), beside the other Grades of the Run.

    Labelling again writes another Grade; the newest label counts. RUN_ID is an id or a
    unique prefix; EVAL_OR_SUITE (or a store folder) is where to look (default: .).
    """
    from smevals.commands.label import label_run
    from smevals.evaldef.load import display_path

    written, run = label_run(paths, store, run_id, verdict, note, by)
    click.echo(f"Labelled Run {run.id} {verdict}: Grade {written.id}")
    click.echo(f"  {display_path(written.path)}")
