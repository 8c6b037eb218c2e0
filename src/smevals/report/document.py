"""What every renderer receives: one `EvalReport` per Eval, and the report-wide settings."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property

from smevals.errors import SmevalsError
from smevals.report.checks import EvalChecks, eval_checks
from smevals.report.jsondoc import Damaged
from smevals.report.repeats import Repeats, repeats
from smevals.report.rows import Collected
from smevals.report.summary import Group, leaderboard
from smevals.report.taskpass import DEFAULT

CURRENT = "current"        # the newest Grade of the current grader version (and answer keys)
VERSION = "version"        # the newest Grade of a version given by prefix
ANY = "any"                # the newest Grade of any version


@dataclass
class EvalReport:
    name: str
    path: str                  # the Eval folder as found
    store: str                 # where its store was read (a folder, or REV:folder)
    grader: str
    version: str               # the current version, or the prefix asked for
    choice: str                # CURRENT, VERSION or ANY
    collected: Collected
    rev: str | None = None
    commit: str | None = None
    current: str = ""          # the grader's current version (where the store was read)
    notes: list[str] = field(default_factory=list)
    stale: dict[str, int] = field(default_factory=dict)    # stale Runs left out, by reason
    tasks: frozenset[str] | None = None      # the tasks the Eval defines on this side
    configs: frozenset[str] | None = None    # the configs it defines
    present: bool = True       # False: the Eval is absent on this side (diff of a Suite)
    damaged: list[Damaged] = field(default_factory=list)   # objects left out
    files: dict[str, str] = field(default_factory=dict)   # what `current` covers (version.py)

    @cached_property
    def groups(self) -> list[Group]:
        return leaderboard(self.collected.rows)

    @cached_property
    def checks(self) -> EvalChecks:
        """Per-Check figures, overall and per config x model (smevals.report.checks)."""
        return eval_checks(self.collected)

    @cached_property
    def repeats(self) -> list[Repeats]:
        return repeats(self.groups)

    @property
    def older_versions(self) -> int:
        """Rows whose Grade is of another version than the current one (with --any-version)."""
        if self.choice != ANY:
            return 0
        return sum(1 for r in self.collected.rows if r.version != self.version)


@dataclass(frozen=True)
class Settings:
    generated: str
    by_task: bool = False
    task_pass: str = DEFAULT       # when a task passes (smevals.report.taskpass)


def generated_at() -> str:
    """Now in UTC, or SOURCE_DATE_EPOCH when set (reproducible output for tests and builds)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    try:
        moment = datetime.fromtimestamp(int(epoch), UTC) if epoch.isdigit() else datetime.now(UTC)
    except (ValueError, OverflowError, OSError):        # past year 9999, or the platform's end
        raise SmevalsError(f"SOURCE_DATE_EPOCH: '{epoch[:40]}' is not a time smevals can "
                           "show (seconds since 1970, before the year 10000)") from None
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
