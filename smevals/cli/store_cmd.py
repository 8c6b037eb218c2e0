"""`smevals verify`, `smevals show`, `smevals gc`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click
import orjson

from smevals.cli.base import cli, evals_argument, store_option
from smevals.errors import EvidenceFailed

if TYPE_CHECKING:
    from smevals.store.records import GradeRecord, RunRecord


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
    from smevals.commands.store import verify_command

    report = verify_command(paths, store, rev)
    if as_json:
        doc = {"checked": report.checked, "ok": not report.problems, "rev": rev,
               "problems": [{"store": str(root), "path": d.path, "message": d.message}
                            for root, d in report.problems]}
        click.echo(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode())
    else:
        from smevals.spec.load import display_path

        where = f"{rev}:" if rev else ""
        for root, damage in report.problems:
            click.echo(f"{where}{display_path(root / damage.path)}: {damage.message}")
    if report.problems:
        raise EvidenceFailed(f"{len(report.problems)} problem(s) in {report.checked} object(s)")
    if not as_json:
        click.echo(f"OK: {report.checked} object(s) verified, no problems")


@cli.command("show", short_help="Print a Run's or Grade's record and files, or one file.")
@click.argument("ident", metavar="ID")
@evals_argument(required=False)
@click.option("--file", "name", metavar="FILE", help="Print this file of the object instead.")
@click.option("--rev", metavar="REV", help="Read the store as committed at this git revision.")
@store_option
def show_cmd(ident: str, paths: tuple[str, ...], name: str | None, rev: str | None,
             store: str | None) -> None:
    """Print a Run's or Grade's record and file list, or one of its files.

    ID is an id or any unique prefix of at least 6 characters (of the id or of its hash).
    EVAL_OR_SUITE (or a store folder) is where to look (default: the current folder).
    """
    from smevals.commands.store import object_location, show_object
    from smevals.spec.stores import find_object

    st, obj = find_object(paths, store, ident, rev)
    record, content = show_object(st, obj, name)
    if record is None:
        sys.stdout.buffer.write(content)
        return
    click.echo(render_object(obj.kind, obj.id, object_location(st, obj), record, content))
    if obj.kind == "run":
        from smevals.testing.labels import label_lines, labels_of

        lines = label_lines(labels_of(st, obj))
        if lines:
            click.echo("\nlabels (newest first):\n" + "\n".join(lines))


def render_object(kind: str, oid: str, where: str, record: RunRecord | GradeRecord,
                  raw: bytes) -> str:
    """The header, the file list of the record's manifest, then the record as stored."""
    from smevals.store.layout import RECORD_NAMES

    lines = [f"{kind} {oid}", f"path: {where}", "files:"]
    for entry in record.get("files") or []:
        if not isinstance(entry, dict):
            continue
        if "symlink" in entry:
            lines.append(f"  {entry.get('path')} -> {entry['symlink']}")
        else:
            lines.append(f"  {entry.get('path')} ({entry.get('size', '?')} bytes)")
    lines.append(f"  {RECORD_NAMES[kind]} ({len(raw)} bytes, the record below)")
    return "\n".join(lines) + "\n\n" + raw.decode("utf-8", "replace").rstrip("\n")


@cli.command("gc", short_help="Remove leftovers of interrupted writes (and superseded Grades).")
@evals_argument(required=False)
@click.option("--dry-run", is_flag=True, help="Print what would be removed; remove nothing.")
@click.option("--superseded", is_flag=True,
              help="Also remove Grades whose grader version is not the current one, and "
              "errored Grades a later verdict of the same version replaced.")
@click.option("--errored", is_flag=True,
              help="Also remove errored Grades (no verdict) a later verdict of the same "
              "grader version replaced; keep the rest.")
@click.option("--judge-cache", is_flag=True,
              help="Also remove judge cache entries (all, or those the filters below "
              "select); the next grade asks those requests again.")
@click.option("--older-than", metavar="DURATION",
              help="With --judge-cache: only entries stored longer ago than this (90d, 12h, "
              "1d12h; units s m h d w).")
@click.option("--grader", metavar="GRADER",
              help="With --judge-cache: only entries the Grades of this grader asked for.")
@click.option("--model", metavar="MODEL",
              help="With --judge-cache: only entries of this judge model.")
@click.option("--grace", metavar="SECONDS",
              type=click.FloatRange(min=0), default=3600.0, show_default=True,
              help="Seconds a staging folder of a live process is left alone.")
@store_option
def gc_cmd(paths: tuple[str, ...], dry_run: bool, superseded: bool, errored: bool,
           judge_cache: bool, older_than: str | None, grader: str | None, model: str | None,
           grace: float, store: str | None) -> None:
    """Remove staging leftovers of interrupted writes (and, on request, superseded or
    retried Grades and judge cache entries)."""
    from smevals.commands.store import gc_command
    from smevals.grade.evict import JudgeEviction, parse_duration

    judge = None
    if judge_cache:
        judge = JudgeEviction(parse_duration(older_than) if older_than is not None else None,
                              grader, model)
    elif older_than is not None or grader is not None or model is not None:
        raise click.UsageError("--older-than, --grader and --model select judge cache "
                               "entries: use them with --judge-cache")
    report = gc_command(paths, store, dry_run, superseded, grace, errored, judge)
    for line in report.removed:
        click.echo(line)
    click.echo(f"{len(report.removed)} item(s) {'would be ' if dry_run else ''}removed")
