"""Every child process smevals starts (runners, checker programs, `match_output` code).

One entry point, `run_child`: the child starts in its own session with stdin closed and
its resource limits set before exec (limits.py); its stdout and stderr are read while it
runs and kept up to a cap (the rest is read and dropped, stream.py); it has a real
deadline; at the deadline or at its end every process it started is killed, also those
that left its process group or session (tree.py). This package imports nothing else of
smevals, and imports its own modules only when first used (the CLI calls `own_process`
at start-up). The one other kind, `worker.Worker`, is a long-lived child that answers
framed requests on stdin, each with its own deadline (`render_svg`'s renderer).
`contain.containment()` gives the command prefix that hides the network and every other
process from code nobody reviewed (`match_output`); `signals` makes SIGINT and SIGTERM
exit 130 from the `smevals` command's first line.

When smevals runs as its own process (the `smevals` command calls `own_process`), it
also becomes a child subreaper, so finding a child's processes needs no scan of the
system, and it starts a guardian that kills every tree if smevals dies (guardian.py). A
program that imports smevals as a library keeps its process-wide settings: trees are
found by reading /proc, and a guardian is not started.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from smevals.proc.child import Captured, Children, Limits, Result, Spec, run_child
    from smevals.proc.tree import TAG_VAR

__all__ = ["TAG_VAR", "Captured", "Children", "Limits", "Result", "Spec", "own_process",
           "run_child"]

OWNED = {"process": False}


def own_process() -> None:
    """Say that this process is smevals itself, not a program using it as a library."""
    OWNED["process"] = True


def __getattr__(name: str) -> Any:
    if name == "TAG_VAR":
        from smevals.proc import tree

        return tree.TAG_VAR
    if name in __all__:
        from smevals.proc import child

        return getattr(child, name)
    raise AttributeError(f"module 'smevals.proc' has no attribute {name!r}")
