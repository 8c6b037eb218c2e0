"""Run a grader over one fixture, exactly as `smevals grade` would, in a temporary folder:
the Run's folder and the Grade's workspace live there and vanish after; no store is read
or written."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from smevals.checkers.base import normalize_tag
from smevals.evaldef.model import Eval, Grader
from smevals.grade.apply import (
    grade_record,  # the Grade `smevals grade` writes
    run_checks,
    tampering_of,
)
from smevals.grade.job import GradeJob
from smevals.grade.score import failure_reason
from smevals.graderfixtures.cases import Case
from smevals.proc.launch import ProcessGroups
from smevals.store.read import Obj, Store
from smevals.store.records import CheckRecord, RunFields, WorkspaceChanges

RUN_FOLDER = "run"


@dataclass(frozen=True)
class Outcome:
    """What the grader concluded about one case, and how that differs from the case."""

    case: Case
    outcome: str
    score: float | None
    tags: list[str]
    why: str                     # one line: the failing Check (named, else first) and notes
    mismatches: list[str]
    seconds: float
    tampering: list[str] = field(default_factory=list)   # the kinds the Grade marked
    missing: list[str] = field(default_factory=list)    # optional dependencies not installed

    @property
    def ok(self) -> bool:
        return not self.mismatches and not self.missing


def run_case(ev: Eval, grader: Grader, version: str, case: Case, environ: dict[str, str],
             groups: ProcessGroups) -> Outcome:
    clock = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="smevals-test-") as tmp:
        root = Path(tmp)
        _lay_out(root / RUN_FOLDER, case)
        record = _run_record(ev, case)
        job = GradeJob(ev, grader, version, Obj("run", f"fixture-{case.name}", RUN_FOLDER,
                                                record), Store(root), environ, groups)
        workspace = root / "grade"
        workspace.mkdir()
        results = run_checks(job, workspace, {**case.task, **case.grading})
        grade = grade_record(job, results, case.grading, datetime.now(UTC), 0.0,
                             tampering_of(job, root / RUN_FOLDER, case.grading))
    checks = grade["checks"]
    first = next((c for c in checks if not c.get("skipped") and not c.get("ok")), None)
    named = _named_check(checks, case.failing_check)[0] if case.failing_check else None
    why = failure_reason(grader, [named] if named else checks, grade["score"]) \
        if grade["outcome"] != "pass" else ""
    kinds = sorted({str(m.get("kind")) for m in grade.get("tampering") or []})
    got = Outcome(case, str(grade["outcome"]), grade["score"], list(grade["tags"]), why,
                  [], time.monotonic() - clock, kinds, missing_dependencies(checks))
    if not got.missing:             # the grader could not do its work: nothing to compare
        got.mismatches.extend(mismatches(case, got, checks, first))
    return got


def missing_dependencies(checks: list[CheckRecord]) -> list[str]:
    """One line per optional dependency a Check needed and did not find: what it needs and
    the line that installs it (`render_svg needs resvg, which is not installed: pip
    install 'resvg>=0.2'`)."""
    out: list[str] = []
    for check in checks:
        details = check.get("details") or {}
        if isinstance(details, dict) and details.get("missing_extra") and check.get("notes"):
            line = str(check["notes"]).splitlines()[0]
            if line not in out:
                out.append(line)
    return out


def _lay_out(run_dir: Path, case: Case) -> None:
    run_dir.mkdir()
    (run_dir / "output.txt").write_bytes(case.output)
    for name, content in case.files.items():
        target = run_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)


def _run_record(ev: Eval, case: Case) -> RunFields:
    """A fixture's Run (without inputs: grading never reads them). For a Task with starting
    files, the case's files are the agent's work on top of them (the final tree a `command`
    Check sees is the starting files with the case's files over them)."""
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    record = cast(RunFields, {"eval": ev.name, "task": case.task, "grading": case.grading,
                  "config": {"name": "fixture", "runner": "fixture", "model": case.model},
                  "model": case.model, "usage": case.usage, "status": "ok", "started": now,
                  "ended": now, "duration_seconds": 0.0, "exit_code": 0})
    changes = _changes(ev, case)
    if changes is not None:
        record["workspace"] = changes
    return record


def _changes(ev: Eval, case: Case) -> WorkspaceChanges | None:
    from smevals.evaldef.workspace import KEY, WorkspaceError, tree_of

    spec = case.task.get(KEY)
    if spec is None:
        return None
    try:
        start = tree_of(ev.path, spec)
    except WorkspaceError:
        return None                 # `validate` names it; the tree is the case's files
    return {"hash": start.digest, "changed": sorted(n for n in case.files if n in start.sha256),
            "added": sorted(n for n in case.files if n not in start.sha256), "deleted": []}


def mismatches(case: Case, got: Outcome, checks: list[CheckRecord],
               first: CheckRecord | None) -> list[str]:
    """Every way the grader's conclusion differs from what the case expects."""
    out = []
    if got.outcome != case.expect:
        out.append(f"expected {case.expect}, got {got.outcome}")
    if case.failing_check is not None:
        named, problem = _named_check(checks, case.failing_check)
        out.extend([problem] if problem else [])
        first = named
    reported = case.failing_check is not None and first is None     # said above
    if case.notes is not None and not reported and (
            first is None or case.notes not in str(first.get("notes"))):
        out.append(f"the failing check's notes do not contain '{case.notes}'")
    out.extend(_score_mismatch(case, got.score))
    out.extend(f"tag '{t}' missing" for t in map(normalize_tag, case.tags) if t not in got.tags)
    out.extend(f"tag '{t}' present" for t in map(normalize_tag, case.absent_tags)
               if t in got.tags)
    if case.tampering is not None and sorted(set(case.tampering)) != got.tampering:
        out.append(f"expected tampering [{', '.join(sorted(set(case.tampering)))}], got "
                   f"[{', '.join(got.tampering)}]")
    return out


def _named_check(checks: list[CheckRecord], label: str | None
                 ) -> tuple[CheckRecord | None, str | None]:
    """The result of the Check `label` (its name, else its checker as written), and why it
    does not count as failed (missing, skipped or passed)."""
    for check in checks:
        if (check.get("name") or check.get("checker")) != label:
            continue
        if check.get("skipped"):
            return None, (f"expected check '{label}' to fail, it was skipped (an earlier "
                          "required check failed)")
        if check.get("ok"):
            return None, f"expected check '{label}' to fail, it passed"
        return check, None
    return None, f"no check '{label}' in the grader"


def _score_mismatch(case: Case, score: float | None) -> list[str]:
    if not case.score:
        return []
    low, high = case.score.get("min"), case.score.get("max")
    shown = f"[{'' if low is None else f'{low:g}'}, {'' if high is None else f'{high:g}'}]"
    if score is None:
        return [f"expected a score in {shown}, got none"]
    if (low is not None and score < low) or (high is not None and score > high):
        return [f"score {score:.3g} is outside {shown}"]
    return []
