"""The click group every command attaches to, and shared options."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click

from smevals import scope
from smevals.errors import SmevalsError
from smevals.version import __version__

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class CheckedCommand(click.Command):
    """A command that refuses, naming the option, what no record can hold: text that is not
    valid UTF-8 (a model, a label's author or note, a task or config name is kept in records,
    which are UTF-8; a `click.Path` may be any bytes, as a file name may), and a number that
    is not finite (`--timeout nan` would mean no timeout at all)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, args)
        for param in self.get_params(ctx):
            if param.name is not None and not isinstance(param.type, click.Path):
                _refuse(ctx, param, ctx.params.get(param.name))
        return rest


class CheckedGroup(CheckedCommand, click.Group):
    """The group of CheckedCommands (and of sub-groups like itself)."""

    command_class = CheckedCommand
    group_class: type[click.Group] | type[type] = type


def _refuse(ctx: click.Context, param: click.Parameter, value: object) -> None:
    """Raise BadParameter when `value` holds a byte that is not UTF-8 (Python keeps such a
    byte of argv as a lone surrogate) or a number that is not finite."""
    if isinstance(value, tuple | list):
        for item in value:
            _refuse(ctx, param, item)
    elif isinstance(value, float) and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number", ctx=ctx, param=param)
    elif isinstance(value, str) and not value.isascii():
        from smevals.evaldef.load import bad_byte, printable

        if (byte := bad_byte(value)) is None:
            return
        raise click.BadParameter(f"'{printable(value)}' is not valid UTF-8 (byte 0x{byte:02x})",
                                 ctx=ctx, param=param)


class CommandGroup(CheckedGroup):
    """Each command runs in its own scope (smevals/scope.py), whether from the console or
    in-process (click's CliRunner), and says at its end which damaged objects it left out."""

    group_class: type[click.Group] = CheckedGroup     # a sub-group: inside the command's scope

    def invoke(self, ctx: click.Context) -> Any:
        with scope.command() as command:
            try:
                done = super().invoke(ctx)
            except SmevalsError:
                _warn_damaged(command)
                raise
            _warn_damaged(command)
            return done


DAMAGE_SHOWN = 10


def _warn_damaged(command: scope.Command) -> None:
    """Say on stderr which damaged objects the command left out (see store/damage.py)."""
    found = command.found_damaged()
    if not found:
        return
    lines = [f"Warning: {len(found)} damaged object(s) left out (nothing in them was "
             "counted); run `smevals verify` for details:"]
    lines += [f"  {label}/{rel}: {why}" for label, rel, why in found[:DAMAGE_SHOWN]]
    if len(found) > DAMAGE_SHOWN:
        lines.append(f"  ... and {len(found) - DAMAGE_SHOWN} more")
    click.echo("\n".join(lines), err=True)


@click.group(cls=CommandGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="smevals")
@click.option("--debug", is_flag=True, help="Show the full traceback of an unexpected error.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Run evals against language models and agent harnesses, grade the Runs, and keep
    every Run and Grade as an immutable, content-addressed directory.

    \b
    Typical session (in any folder; the haiku example runs offline):
      smevals init --example haiku my-eval
      smevals validate my-eval
      smevals run my-eval -g
      smevals report my-eval
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def store_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """`--store DIR`: where Runs and Grades live (one sub-folder per Eval)."""
    return click.option(
        "--store",
        "store",
        type=click.Path(file_okay=False),
        envvar="SMEVALS_STORE",
        help="Results store folder shared by Evals (one sub-folder per Eval). "
        "Default: <eval>/results. Env: SMEVALS_STORE.",
    )(f)


def non_empty(ctx: click.Context, param: click.Parameter, value: object) -> Any:
    """Refuse an empty name (`-m ''`): it names nothing, or a folder no one meant."""
    values = value if isinstance(value, tuple) else (value,)
    if any(isinstance(v, str) and not v.strip() for v in values):
        raise click.BadParameter("a name cannot be empty")
    return value


def evals_argument(required: bool = True, shown_required: bool | None = None
                   ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`EVAL_OR_SUITE...`: the Evals (or Suites of Evals) a command works on, shown the same
    way by every command. `shown_required` for a command that checks presence itself."""
    shown = required if shown_required is None else shown_required
    return click.argument("paths", nargs=-1, required=required, type=click.Path(),
                          metavar="EVAL_OR_SUITE..." if shown else "[EVAL_OR_SUITE]...")
