"""`smevals show`: a Run's or Grade's record and files, or one of its files (the work is
commands/show.py's)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from smevals.cli.base import cli, evals_argument, store_option

if TYPE_CHECKING:
    from smevals.store.records import GradeRecord, RunRecord


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
    from smevals.commands.show import object_location, show_object
    from smevals.evaldef.stores import find_object

    st, obj = find_object(paths, store, ident, rev)
    record, content = show_object(st, obj, name)
    if record is None:
        sys.stdout.buffer.write(content)
        return
    click.echo(render_object(obj.kind, obj.id, object_location(st, obj), record, content))
    if obj.kind == "run":
        from smevals.graderfixtures.labels import label_lines, labels_of

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
