"""`smevals verify`: every hash of the stores recomputed, every problem listed (the work is
commands/verify.py's)."""

from __future__ import annotations

import click
import orjson

from smevals.cli.base import cli, evals_argument, store_option
from smevals.errors import EvidenceFailed


@cli.command("verify", short_help="Recompute every hash of the stores and list every problem.")
@evals_argument(required=False)
@click.option("--rev", metavar="REV", help="Verify the store as committed at this git revision.")
@click.option("--json", "as_json", is_flag=True, help="Print the problems as JSON.")
@store_option
def verify_cmd(paths: tuple[str, ...], rev: str | None, as_json: bool, store: str | None) -> None:
    """Recompute every hash and list every problem (changed, missing or extra files, renamed
    folders, edited records, Grades whose Run is missing, staging leftovers). Exit 1 if any.

    EVAL_OR_SUITE may also be a store folder (default: the current folder).
    """
    from smevals.commands.verify import verify_command

    report = verify_command(paths, store, rev)
    if as_json:
        doc = {"checked": report.checked, "ok": not report.problems, "rev": rev,
               "problems": [{"store": str(root), "path": d.path, "message": d.message}
                            for root, d in report.problems]}
        click.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
    else:
        from smevals.evaldef.load import display_path

        where = f"{rev}:" if rev else ""
        for root, damage in report.problems:
            click.echo(f"{where}{display_path(root / damage.path)}: {damage.message}")
    if report.problems:
        raise EvidenceFailed(f"{len(report.problems)} problem(s) in {report.checked} object(s)")
    if not as_json:
        click.echo(f"OK: {report.checked} object(s) verified, no problems")
