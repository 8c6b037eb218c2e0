"""Command-line interface. Only this package imports click."""

from __future__ import annotations

import os
import sys
import traceback

import click

from smevals.cli import commands as _commands  # noqa: F401  (registers the commands)
from smevals.cli.base import cli
from smevals.errors import EXIT_BAD_INPUT, Exit, SmevalsError

EXIT_INTERNAL = 3

__all__ = ["cli", "main"]


def main(argv: list[str] | None = None) -> None:
    """Console entry point: no traceback reaches a user unless --debug asks for it."""
    args = sys.argv[1:] if argv is None else argv
    if argv is None:
        from smevals.proc import own_process

        own_process()          # the whole process is smevals (see smevals/proc/__init__)
    debug = "--debug" in args or os.environ.get("SMEVALS_DEBUG") == "1"
    code = _run(args, debug)
    code = code if isinstance(code, int) else 0
    if argv is None and _reader_gone():
        code = 0
    if code:
        sys.exit(code)


def _run(args: list[str], debug: bool) -> int | None:
    """The command's exit code (None for 0), or SystemExit with the code of an error."""
    code = None
    try:
        code = cli.main(args=args, prog_name="smevals", standalone_mode=False)
    except SmevalsError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except Exit as exc:
        sys.exit(exc.code)
    except click.exceptions.Abort as exc:
        # click turns a KeyboardInterrupt inside a command (SIGINT or SIGTERM landing where
        # the command does not handle it) into Abort: that is the interrupt
        interrupted = isinstance(exc.__cause__, KeyboardInterrupt)
        click.echo("Interrupted." if interrupted else "Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(EXIT_BAD_INPUT if exc.exit_code == 2 else exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as exc:  # an unexpected bug: short message, traceback on request
        _internal(exc, debug)
    return code if isinstance(code, int) else None


def _reader_gone() -> bool:
    """Flush the output now; when its reader has gone (`smevals report | head`), send what is
    left to /dev/null, so that the exit says nothing of a broken pipe."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.dup2(devnull, sys.stderr.fileno())
        return True
    except OSError:
        pass
    return False


def _internal(exc: Exception, debug: bool) -> None:
    """An unexpected bug: a short message, the traceback only with --debug; exit 3. After
    SIGINT or SIGTERM it is the interrupt, wrapped by the code it hit: exit 130."""
    from smevals.proc.signals import received

    if received():
        click.echo("Interrupted.", err=True)
        sys.exit(130)
    if debug:
        traceback.print_exception(exc)
    else:
        click.echo(f"Internal error: {type(exc).__name__}: {exc}\n"
                   "This is a bug in smevals. Re-run with --debug to see the traceback.",
                   err=True)
    sys.exit(EXIT_INTERNAL)
