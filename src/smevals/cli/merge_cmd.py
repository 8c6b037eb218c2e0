"""`smevals merge`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from smevals.cli.base import cli
from smevals.errors import EvidenceFailed

if TYPE_CHECKING:
    from smevals.store.merge import Merged


@cli.command("merge", short_help="Copy into a store the verified objects of other stores.")
@click.argument("sources", nargs=-1, required=True, metavar="SRC...",
                type=click.Path(file_okay=False))
@click.option("--into", metavar="STORE", envvar="SMEVALS_STORE", required=True,
              type=click.Path(file_okay=False),
              help="The store to merge into. Env: SMEVALS_STORE.")
def merge_cmd(sources: tuple[str, ...], into: str) -> None:
    """Copy into STORE every Run and Grade of each SRC that STORE lacks.

    Each object is verified first (its hash, its place, its files); a damaged one is
    refused and named, an identical one skipped. Merging again copies nothing. A SRC that
    is one store (it has runs/ or grades/) merges into STORE; a folder of stores (a
    --store folder) merges each into the sub-folder of STORE of the same name.
    Exit 1 when an object was refused.
    """
    from smevals.commands.merge import merge_command

    merged = merge_command(sources, into, _line)
    refused = sum(len(m.refused) for m in merged)
    copied = sum(m.copied for m in merged)
    present = sum(m.present for m in merged)
    click.echo(f"Merged {len(merged)} store(s): {copied} object(s) copied, {present} already "
               f"there, {refused} refused")
    if refused:
        raise EvidenceFailed(f"{refused} damaged object(s) refused (run `smevals verify` on "
                             "the source)")


def _line(merged: Merged) -> None:
    from smevals.evaldef.load import display_path

    click.echo(f"{display_path(merged.source)} -> {display_path(merged.into)}: "
               f"{merged.copied} copied, {merged.present} already there")
    for damage in merged.refused:
        click.echo(f"  refused {damage.path}: {damage.message}", err=True)
