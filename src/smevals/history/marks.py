"""What changed for a config x model since the previous (older) listed commit that had it,
said as `diff` says it: the grader version with the files that changed it
(`diff.compare.changed_files`) and, as `diff` splits it, which part of the change the
grader made (the same Runs graded by both versions) and which the evidence made (the Runs
of each commit under the new grader: `history.effects`); the reasons a Run goes stale
(`run.plan.differences`: task edited, config changed, runner changed); and the runner
versions its Runs record (a harness's or the agent loop's, which the inputs leave out:
also `runner changed`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smevals.diff.compare import changed_files
from smevals.history.doc import CONFIG, GRADER, NEW, RUNNER, TASKS, RowDoc
from smevals.history.effects import Effects
from smevals.history.point import Identity
from smevals.report.document import CURRENT, EvalReport
from smevals.report.rows import Collected
from smevals.run.plan import differences

BY_REASON = {"task edited": TASKS, "config changed": CONFIG, "runner changed": RUNNER}

Pair = tuple[str, str, str]         # (eval path, config, model)


class Marker:
    """Fed the commits oldest first; marks each row against its pair's previous one."""

    def __init__(self, effects: Effects | None = None) -> None:
        self.last: dict[Pair, tuple[Identity, str]] = {}
        self.effects = effects

    def mark(self, key: Pair, row: RowDoc, now: Identity, sha: str = "") -> None:
        """Mark `row` (of the commit `sha`) against its pair's previous listed commit."""
        seen = self.last.get(key)
        self.last[key] = (now, sha)
        row["split"] = None
        if seen is None:
            row["marks"], row["changes"] = [NEW], ["first listed commit with these Runs"]
            return
        before, then = seen
        marks, changes = [], []
        if before["grader_version"] != now["grader_version"]:
            marks.append(GRADER)
            changes.append(_grader_text(before, now))
            split = self._split(key, then, sha)
            if split is not None:
                row["split"] = split
                changes.append(str(split["text"] if split.get("available")
                                   else f"not split: {split.get('reason')}"))
        for reason in differences(before["inputs"], now["inputs"]):
            marks.append(BY_REASON[reason])
            changes.append(_tasks_text(before, now) if reason == "task edited" else reason)
        versions = (before.get("runners") or [], now.get("runners") or [])
        if all(versions) and versions[0] != versions[1]:
            if RUNNER not in marks:
                marks.append(RUNNER)
            changes.append(f"runner changed: {', '.join(versions[0])} -> "
                           f"{', '.join(versions[1])}")
        row["marks"], row["changes"] = marks, changes


    def _split(self, key: Pair, before: str, now: str) -> dict[str, Any] | None:
        if self.effects is None or not before or not now:
            return None
        found = self.effects.of(Path(key[0]), before, now).get(f"{key[1]}\0{key[2]}")
        return found if isinstance(found, dict) else None


def _grader_text(before: Identity, now: Identity) -> str:
    files = changed_files(_report(before), _report(now))
    text = f"grader version {before['grader_version']} -> {now['grader_version']}"
    return text + (f" ({', '.join(files)} changed)" if files else "")


def _report(identity: Identity) -> EvalReport:
    """The parts of an EvalReport `changed_files` reads."""
    return EvalReport(name="", path="", store="", grader="",
                      version=identity["grader_version"], choice=CURRENT,
                      collected=Collected(), files=dict(identity["files"]))


def _tasks_text(before: Identity, now: Identity) -> str:
    old, new = set(before["tasks"]), set(now["tasks"])
    parts = [f"{what}: {', '.join(sorted(names))}" for what, names
             in (("tasks added", new - old), ("tasks deleted", old - new)) if names]
    return "; ".join(parts) or "task edited"
