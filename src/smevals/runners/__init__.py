"""Built-in Runners: `runner: smevals:replay`, `runner: smevals:openai` and `runner: smevals:llm`
(the `llm` library; smevals' optional `llm` extra) run in-process; the harness runners
`smevals:codex`, `smevals:claude-code` and `smevals:pi` run their harness as a child
(runners/harness.py).

Cheap to import: a built-in's module (and urllib, ssl, ...) loads only when it is used.
"""

from __future__ import annotations

import importlib
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from smevals.runners.base import BuiltinContext, BuiltinOutcome, Problems, RunFailed

__all__ = [
    "BUILTINS",
    "PREFIX",
    "BuiltinContext",
    "BuiltinOutcome",
    "builtin_name",
    "config_problems",
    "preflight",
    "run_builtin",
]

PREFIX = "smevals:"

# name -> (module, function running one Run). Each module also has `config_problems(config)`;
# a harness runner's module declares a HARNESS (runners/harness.py), which has all three.
BUILTINS: dict[str, tuple[str, str]] = {
    "replay": ("smevals.runners.replay", "run"),
    "openai": ("smevals.runners.openai", "run"),
    "llm": ("smevals.runners.llm", "run"),
    "codex": ("smevals.runners.codex", "run"),
    "claude-code": ("smevals.runners.claude_code", "run"),
    "pi": ("smevals.runners.pi", "run"),
    "agent": ("smevals.runners.agent", "run"),
}


def builtin_name(runner: str) -> str | None:
    """`"smevals:replay"` -> `"replay"`; any other runner (a program) -> None.

    An unknown `smevals:NAME` still gives NAME, so that validation can say it is unknown.
    """
    if isinstance(runner, str) and runner.startswith(PREFIX):
        return runner[len(PREFIX):].strip()
    return None


def _unknown(name: str) -> str:
    return f"unknown built-in runner {PREFIX}{name}; built-ins: " + ", ".join(
        PREFIX + known for known in sorted(BUILTINS)
    )


def _module(name: str) -> Any:
    """What runs built-in `name`: its module, or the Harness its module declares."""
    module = importlib.import_module(BUILTINS[name][0])
    return getattr(module, "HARNESS", module)


def config_problems(name: str, config: Mapping[str, Any]) -> Problems:
    """(field, message) for each unknown, missing or wrong-typed config key of built-in `name`."""
    if name not in BUILTINS:
        return [("runner", _unknown(name))]
    problems: Problems = _module(name).config_problems(config)
    return problems


def preflight(name: str, config: Mapping[str, Any], config_dir: Path,
              environ: Mapping[str, str]) -> str | None:
    """Why no Run of built-in `name` with this config can start on this machine (a harness
    that is not installed), or None; checked before any Run starts."""
    if name not in BUILTINS:
        return None
    check = getattr(_module(name), "preflight", None)
    return check(config, config_dir, environ) if check is not None else None


def run_builtin(name: str, ctx: BuiltinContext) -> BuiltinOutcome:
    """Run built-in `name` for one Run. Never raises (except KeyboardInterrupt / SystemExit)."""
    prefix = PREFIX + name
    try:
        if name not in BUILTINS:
            raise RunFailed(_unknown(name), failure="launch")
        run = getattr(_module(name), BUILTINS[name][1])
        outcome: BuiltinOutcome = run(ctx)
        return outcome
    except RunFailed as failed:
        return failed.outcome(prefix)
    except Exception as error:  # the contract is: never raise
        last = traceback.extract_tb(error.__traceback__)[-1:]
        where = f" (at {last[0].filename}:{last[0].lineno})" if last else ""
        return RunFailed(f"internal error: {type(error).__name__}: {error}{where}").outcome(prefix)
