"""When a Task passes, given its counted Runs of one config x model: the one rule every
per-Task verdict uses (`diff`'s flips and paired tests, `report`'s JUnit testcases and
JSON), set by `--task-pass`.

- `majority` (the default): more than half of its Runs pass (1 of 2 does not);
- `all`: every Run passes;
- `any`: at least one Run passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

MAJORITY, ALL, ANY = "majority", "all", "any"
RULES = (MAJORITY, ALL, ANY)
DEFAULT = MAJORITY

WORDS = {MAJORITY: "more than half of its Runs pass", ALL: "every one of its Runs passes",
         ANY: "at least one of its Runs passes"}


class _Passed(Protocol):
    passed: bool


def task_passes(rows: Sequence[_Passed], rule: str = DEFAULT) -> bool:
    """Whether a Task with these counted Runs passes under `rule` (no Run: it does not)."""
    passed = sum(1 for r in rows if r.passed)
    if rule == ALL:
        return bool(rows) and passed == len(rows)
    if rule == ANY:
        return passed > 0
    return 2 * passed > len(rows)

