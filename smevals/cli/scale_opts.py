"""Options shared by `run` and `grade` for sharding and scale-out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from smevals.errors import SmevalsError


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> Any:
    from smevals.run.shard import parse_shard

    try:
        return parse_shard(value)
    except SmevalsError as exc:
        raise click.BadParameter(str(exc).removeprefix("--shard: ")) from None


def scale_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--shard I/N, --dask ADDRESS, --dask-resources NAME=AMOUNT."""
    options = [
        click.option("--shard", metavar="I/N", callback=_shard,
                     help="Only shard I of N of the planned work (deterministic: the N shards "
                     "together plan what one command plans)."),
        click.option("--dask", "dask", metavar="ADDRESS", envvar="SMEVALS_DASK",
                     help="Send the work to the Dask scheduler at ADDRESS (needs "
                     "smevals[dask]); this process alone writes the store. Env: SMEVALS_DASK."),
        click.option("--dask-resources", "dask_resources", metavar="NAME=AMOUNT", multiple=True,
                     help="Dask worker resources each unit of work needs, e.g. GPU=1 "
                     "(repeatable)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def cluster_spec(address: str | None, resources: tuple[str, ...]) -> Any:
    """The ClusterSpec for --dask, or None; --dask-resources alone is an error."""
    from smevals.scale import ClusterSpec, parse_resources

    wanted = parse_resources(resources)
    if not address:
        if wanted:
            raise click.UsageError("--dask-resources needs --dask ADDRESS (or SMEVALS_DASK)")
        return None
    return ClusterSpec(address, wanted)
