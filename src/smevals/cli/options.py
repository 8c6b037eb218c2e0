"""Options shared by several commands: sharding and scale-out (`run`, `grade`), and the
selection and output of `report` and `diff`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from smevals.cli.base import non_empty, store_option
from smevals.errors import SmevalsError

if TYPE_CHECKING:
    from smevals.run.shard import Shard
    from smevals.scale import ClusterSpec


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> Shard | None:
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
                     "the dask extra); this process alone writes the store. Env: SMEVALS_DASK."),
        click.option("--dask-resources", "dask_resources", metavar="NAME=AMOUNT", multiple=True,
                     help="Dask worker resources each unit of work needs, e.g. GPU=1 "
                     "(repeatable)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def cluster_spec(address: str | None, resources: tuple[str, ...]) -> ClusterSpec | None:
    """The ClusterSpec for --dask, or None; --dask-resources alone is an error."""
    from smevals.scale import ClusterSpec, parse_resources

    wanted = parse_resources(resources)
    if not address:
        if wanted:
            raise click.UsageError("--dask-resources needs --dask ADDRESS (or SMEVALS_DASK)")
        return None
    return ClusterSpec(address, wanted)


def side_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """Options shared by report and diff: grader, filters, stale Runs, store."""
    options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        click.option("-g", "--grader", metavar="GRADER", default="default", show_default=True,
                     help="Grader whose Grades count."),
        click.option("-t", "--task", "tasks", metavar="TASK",
                     multiple=True, help="Only this task (repeatable)."),
        click.option("-m", "--model", "models", metavar="MODEL", multiple=True,
                     callback=non_empty,
                     help="Only this model (repeatable)."),
        click.option("-c", "--config", "configs", metavar="CONFIG", multiple=True,
                     help="Only this config (repeatable)."),
        click.option("--include-stale", is_flag=True,
                     help="Count Runs made from an older task, config or runner too."),
        store_option,
    ]
    for option in reversed(options):
        f = option(f)
    return f


task_pass_option = click.option(
    "--task-pass", type=click.Choice(["majority", "all", "any"]), default="majority",
    show_default=True, help="When a task passes, over its counted Runs of one config x model: "
    "more than half pass (majority), every one (all) or at least one (any).")


def write_output(text: str, output: str | None) -> None:
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        Path(output).write_text(text, encoding="utf-8", newline="\n")
    except OSError as exc:
        raise SmevalsError(f"--output: cannot write {output}: {exc.strerror}") from None
    click.echo(f"Wrote {output}", err=True)
