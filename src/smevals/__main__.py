"""The `smevals` command (and `python -m smevals`).

Its first act is to make SIGINT and SIGTERM exit 130 (smevals/proc/signals.py); only then
does it import the CLI, so a signal during start-up is no different from one later on.
"""

from __future__ import annotations

import contextlib
import sys


def main() -> None:
    from smevals.proc import signals

    signals.install()
    code: int = 0
    try:
        from smevals.cli import main as cli_main

        cli_main()
    except SystemExit as exc:
        if exc.code is not None and not isinstance(exc.code, int):
            raise
        code = exc.code or 0
    except KeyboardInterrupt:
        _say("Interrupted.")
        code = signals.INTERRUPTED
    except Exception:
        if not signals.received():
            raise
        _say("Interrupted.")              # the interrupt, wrapped by the code it hit
        code = signals.INTERRUPTED
    sys.exit(signals.finish(code))


def _say(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(line, file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
