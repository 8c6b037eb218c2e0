"""smevals: run evals, grade Runs, keep results as immutable content-addressed files."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from smevals import wiring
from smevals.version import __version__

if TYPE_CHECKING:
    from smevals.analysis.api import (
        checks,
        checks_df,
        evals,
        history_df,
        log,
        runs,
        runs_df,
    )
    from smevals.analysis.results import CheckResult, EvalResults, RunResult
    from smevals.errors import SmevalsError

# The read API (docs/analysis.md), imported on first use so that `import smevals` and every
# command start as fast as before (tests/analysis/test_startup.py).
_LAZY = {name: "smevals.analysis.api" for name in
         ("evals", "runs", "checks", "runs_df", "checks_df", "history_df", "log")}
_LAZY.update({name: "smevals.analysis.results" for name in
              ("RunResult", "CheckResult", "EvalResults")})
_LAZY["SmevalsError"] = "smevals.errors"

__all__ = ["CheckResult", "EvalResults", "RunResult", "SmevalsError", "__version__", "check",
           "checks", "checks_df", "evals", "history_df", "log", "runs", "runs_df"]


def __getattr__(name: str) -> Any:
    """The read API's names, imported on first use (PEP 562)."""
    import importlib

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'smevals' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def _judge_checkers() -> Mapping[str, Any]:
    """The judge checkers' table, imported on first use (smevals.wiring)."""
    from smevals.judges.checks import CHECKERS

    return CHECKERS


wiring.CHECKER_FAMILIES["judges"] = _judge_checkers


def check(
    spec: dict[str, Any],
    output: str,
    task: dict[str, Any] | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run one built-in Check on `output` without a store; see smevals.checkers.api."""
    from smevals.checkers.api import check as _check

    return _check(spec, output, task=task, usage=usage)
