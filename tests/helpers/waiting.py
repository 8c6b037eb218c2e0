"""Waiting for a condition, not for a time."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for(condition: Callable[[], object], what: str, seconds: float = 20) -> None:
    """Return as soon as `condition()` is true; fail the test naming `what` if it is still
    false after `seconds` (a bound for a loaded machine, not a timing claim)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"still waiting after {seconds}s for {what}")
        time.sleep(0.02)
