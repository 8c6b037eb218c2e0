"""Every child process smevals starts (runners, checker programs, `match_output` code).

One entry point, `run_child`: the child starts in its own session with stdin closed and
its resource limits set before exec (limits.py); its stdout and stderr are read while it
runs and kept up to a cap (the rest is read and dropped, stream.py); it has a real
deadline; at the deadline or at its end every process it started is killed, also those
that left its process group or session (tree.py); if smevals dies, the guardian kills
them (guardian.py). The duration is measured until all of that is done. This package
imports nothing else of smevals.
"""

from __future__ import annotations

from smevals.proc.child import Captured, Children, Limits, Result, Spec, run_child
from smevals.proc.tree import TAG_VAR

__all__ = ["TAG_VAR", "Captured", "Children", "Limits", "Result", "Spec", "run_child"]
