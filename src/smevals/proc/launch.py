"""Launch one runner program: no arguments, stdin closed, through `smevals.proc` (its own
session, a deadline that kills its whole tree, output capped while it is read)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smevals.proc import Children, Result, Spec, run_child

ProcessGroups = Children        # the name the commands use

DEFAULT_OUTPUT_CAP = 10 * 1024 * 1024     # bytes kept of a runner's stdout and of its stderr


@dataclass
class Finished:
    stdout: bytes
    stderr: bytes
    exit_code: int | None
    failure: str | None        # None, "exit", "timeout", "signal", "launch"
    detail: str
    seconds: float
    written: dict[str, int] = field(default_factory=dict)   # stream -> bytes written, if capped
    provenance: dict[str, Any] = field(default_factory=dict)   # a built-in's additions (version)


def launch(argv: list[str], cwd: Path, env: dict[str, str], timeout: float | None,
           groups: Children, cap: int = DEFAULT_OUTPUT_CAP, what: str = "runner") -> Finished:
    """Run `argv` (a runner, or a checker program: `what` names it in the failure)."""
    res = run_child(Spec(argv, cwd, env, timeout=timeout, cap=cap), groups)
    written = {name: c.total for name, c in (("stdout", res.stdout), ("stderr", res.stderr))
               if c.truncated}
    failure, detail = _failure(res, timeout, what)
    code = None if res.timed_out else res.exit_code
    return Finished(res.stdout.data, res.stderr.data, code, failure, detail,
                    res.seconds, written)


def _failure(res: Result, timeout: float | None, what: str) -> tuple[str | None, str]:
    if res.error is not None:
        return "launch", res.error
    if res.timed_out:
        return "timeout", (f"timed out after {timeout:g}s; the {what} and every process it "
                           "started were killed")
    if res.signal_name is not None:
        return "signal", f"killed by signal {res.signal_name}"
    if res.exit_code:
        return "exit", f"exited with status {res.exit_code}"
    return None, ""
