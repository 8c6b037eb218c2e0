"""How many tests the hidden files define: counted by the test runner itself in a clean tree
(the Task's starting files and the hidden files, none of the agent's), so that a run that
ran fewer is seen.

`python -m pytest` (or `pytest`) collects with `--collect-only` and says how many it found;
smevals' unittest runner counts the suite it would run. A count that cannot be had (another
command, a collection error in the clean tree, a deadline) is None, and the Check goes by
`expect_tests` alone. Counts are kept for the process, by the command and the digests of
both sets of files: the Runs of one Task are counted once, also when their Checks run at
once (`-j`): one thread counts while the others wait for its count.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from smevals import caches
from smevals.checkers.cmdline import Plan, ReportFolder, plan, report_folder
from smevals.checkers.testcounts import collected_by_pytest
from smevals.proc.sandbox import Outcome

if TYPE_CHECKING:
    from smevals.evaldef.workspace import Starting

class RunFn(Protocol):
    """Runs a plan in the sandbox the Check uses (in a folder, with a home)."""

    def __call__(self, steps: Plan, folder: Path, home: Path) -> Outcome: ...

    def bound(self) -> bool: ...


_KEPT: dict[tuple[str, ...], int | None] = {}
_COUNTING: dict[tuple[str, ...], threading.Lock] = {}  # key -> held while one thread counts
caches.register(__name__, "_KEPT", "_COUNTING")
_GUARD = threading.Lock()
KEEP = 256


def defined_tests(spec: str | list[str], runner: str, start: Starting | None,
                  hidden: Starting, run: RunFn) -> int | None:
    """The tests the hidden files define (see the module's docstring). `start` and `hidden`
    are `smevals.evaldef.workspace.Starting` (start: None without starting files); `run(plan,
    folder, home)` runs a plan in the sandbox the Check uses."""
    if runner not in ("pytest", "unittest"):
        return None
    key = (json.dumps(spec), runner, start.digest if start is not None else "", hidden.digest,
           sys.executable)
    with _GUARD:
        if key in _KEPT:
            return _KEPT[key]
        one = _COUNTING.setdefault(key, threading.Lock())
    with one:               # the Checks of a Task's Runs graded at once: one counts, the
        with _GUARD:        # others wait for its count
            if key in _KEPT:
                return _KEPT[key]
        found = _collect(spec, runner, start, hidden, run)
        with _GUARD:
            if len(_KEPT) >= KEEP:
                _KEPT.clear()
            _KEPT[key] = found
            _COUNTING.pop(key, None)
    return found


def _collect(spec: str | list[str], runner: str, start: Starting | None,
             hidden: Starting, run: RunFn) -> int | None:
    from smevals.evaldef.workspace import CopyError, copy_in
    from smevals.files.workspace import open_dir

    with tempfile.TemporaryDirectory(prefix="smevals-collect-") as tmp:
        root = Path(tmp).resolve()
        work, home = root / "work", root / "home"
        work.mkdir()
        home.mkdir()
        fd = open_dir(work)
        try:
            if start is not None:
                copy_in(start, fd)
            copy_in(hidden, fd, replace=True)
        except CopyError:
            return None
        finally:
            os.close(fd)
        folder = report_folder(home, run.bound())
        outcome = run(plan(spec, folder, collect=True), work, home)
        return _count(runner, outcome, folder)


def _count(runner: str, outcome: Outcome, folder: ReportFolder) -> int | None:
    if outcome.error or outcome.timed_out or outcome.over_cap:
        return None
    if runner == "pytest":
        if outcome.exit_code not in (0, 5):         # 5: no tests collected
            return None
        return collected_by_pytest(bytes(outcome.stdout).decode("utf-8", "replace"))
    try:
        data = json.loads(folder.report.read_bytes()[:4096])
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("errors") != 0:
        return None
    count = data.get("collected")
    return count if isinstance(count, int) and not isinstance(count, bool) else None
