"""smevals: run evals, grade Runs, keep results as immutable content-addressed files."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from smevals import wiring
from smevals.version import __version__

__all__ = ["__version__", "check"]


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
