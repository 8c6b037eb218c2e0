"""Apply one grader version to one Run and store the Grade (never touching the Run)."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from smevals.evaldef.model import Check, Eval, Grader
from smevals.evaldef.paths import path_problem
from smevals.evaldef.programs import ProgramError
from smevals.files.regular import NotRegular, read_text
from smevals.grade.job import GradeJob, applicable
from smevals.grade.normalise import normalize_tags
from smevals.grade.program import CheckerContext, run_program
from smevals.grade.score import failure_reason, grade_outcome, grade_score
from smevals.grade.version import checker_program, grading_hash
from smevals.phases import phase
from smevals.store import damage
from smevals.store.checkedcopy import Damaged, checked_copy, read_checked
from smevals.store.read import Obj
from smevals.store.records import CheckRecord, GradeFields, RunFields
from smevals.store.write import Sealed

if TYPE_CHECKING:
    from smevals.judges.engine import DryCount, JudgeContext

GRADER_COPY = "grader.yaml"


@dataclass(frozen=True)
class GradeResult:
    run: Obj[RunFields]
    id: str
    rel: str
    outcome: str
    score: float | None
    record: GradeFields
    why: str = ""                # for a failed Grade: the first failing Check, in one line
    sealed: Sealed | None = field(default=None, compare=False)   # not placed yet


def grading_data(ev: Eval, run: Obj[RunFields]) -> dict[str, Any]:
    """The Task's current grading data while the Task exists, else the Run's copy."""
    task = ev.task(str(run.record.get("task", {}).get("name")))
    if task is not None:
        return dict(task.grading)
    return dict(run.record.get("grading") or {})


def grade_run(job: GradeJob, place: bool = True) -> GradeResult | None:
    """Grade `job.run`; None when the session was cancelled meanwhile. Checkers read a
    private copy of the Run, checked against its record first (store/checkedcopy.py):
    raises Damaged, grading nothing, when `verify` would reject the Run. Without `place`,
    the Grade is sealed, not placed (`GradeResult.sealed`: placing it is the caller's)."""
    with private_run(job) as run_dir:
        return _graded(job, run_dir, place)


@contextmanager
def private_run(job: GradeJob) -> Iterator[Path]:
    """A private, checked copy of the Run's folder, removed afterwards."""
    with phase("grading copy"):
        folder = Path(tempfile.mkdtemp(prefix="smevals-run-"))
    try:
        with phase("grading copy"):
            checked_copy(job.store.root, "run", job.run.rel, folder)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def grade_sealed(job: GradeJob, run_dir: Path) -> GradeResult | None:
    """Grade `job.run`, whose checked copy is `run_dir`, and seal the Grade without placing
    it (`GradeResult.sealed`: placing or aborting it is the caller's). For a Run this process
    has just sealed and not yet placed (`run -g`): nobody else can see it, so it needs no
    claim, and `run_dir` is the copy made from the very bytes sealed."""
    return _graded(job, run_dir, place=False)


def _graded(job: GradeJob, run_dir: Path, place: bool = True) -> GradeResult | None:
    with phase("grade staging"):
        staging = job.store.stage("grade")
    try:
        started, clock = datetime.now(UTC), time.monotonic()
        with phase("grade staging"):
            (staging.dir / GRADER_COPY).write_bytes(job.grader.raw)
        with phase("checks"):
            grading = grading_data(job.ev, job.run)
            results = run_checks(job, staging.dir,
                                 {**job.run.record.get("task", {}), **grading}, run_dir)
        if job.groups.cancelled.is_set():
            staging.abort()
            return None
        with phase("grade record"):
            record = grade_record(job, results, grading, started, time.monotonic() - clock,
                                  tampering_of(job, run_dir, grading))
        rec = job.run.record
        sealed = staging.seal(record, [job.grader.name, rec["task"]["name"],
                                       rec["config"]["name"], rec["model"]])
        if place:
            sealed.place()
    except NotRegular as exc:       # its output.txt is a FIFO, ...: damage, never graded
        staging.abort()
        damage.note(job.store.source.label, job.run.rel, f"output.txt is {exc}")
        return None
    except BaseException:
        staging.abort()
        raise
    why = "" if record["outcome"] == "pass" else failure_reason(job.grader, record["checks"],
                                                                record["score"])
    return GradeResult(job.run, sealed.id, sealed.rel, record["outcome"], record["score"],
                       record, why, None if place else sealed)


def run_checks(job: GradeJob, workspace: Path, task: dict[str, Any],
               run_dir: Path | None = None) -> list[CheckRecord]:
    """Every applicable Check of the grader on the Run in `run_dir` (by default its folder
    in the store)."""
    run_dir = run_dir or job.store.path_of(job.run)
    from smevals.grade.tree import FinalTree

    tree = FinalTree(job.ev, dict(job.run.record), run_dir)     # built when a Check asks
    ctx = CheckerContext(run_dir, workspace, job.run.record, task, job.ev.path, job.environ,
                         job.groups, job, tree)
    results: list[CheckRecord] = []
    halted = False
    checks = applicable(job.grader.checks, task)
    if not checks:
        return [no_check_applied(job.grader, task)]
    try:
        for check in checks:
            if halted:
                skipped: CheckRecord = {"checker": check.checker, "skipped": True}
                label = _label(check)
                if "name" in label:
                    skipped["name"] = label["name"]
                results.append(skipped)
                continue
            result = _one(job, check, ctx)
            results.append(result)
            halted = check.required and not result["ok"]
    finally:
        tree.close()
    return results


NO_CHECK = "none"       # the `checker` of the record a Grade gets when no Check applied


def no_check_applied(grader: Grader, task: dict[str, Any]) -> CheckRecord:
    """The one Check record of a Grade to which no Check of the grader applied (every Check
    has an `if_task_has` key the Task lacks): an error, never a pass."""
    keys = sorted({str(c.spec["if_task_has"]) for c in grader.checks
                   if isinstance(c.spec.get("if_task_has"), str)})
    shown = ", ".join(keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
    why = (f"every Check has an if_task_has key the Task lacks ({shown})" if keys
           else "the grader has no Check")
    return cast(CheckRecord, {"checker": NO_CHECK, "name": "no Check applied", "ok": False,
                              "error": True, "score": None,
                              "notes": f"no Check applied to Task "
                                       f"'{task.get('name', '?')}': {why}"})


def is_no_check(record: Any) -> bool:
    """Whether a Grade record is the error of a Grade to which no Check applied (grading
    again cannot change it while the grader and the answer key stay the same)."""
    checks = record.get("checks") if isinstance(record, dict) else None
    return (record.get("outcome") == "error" and isinstance(checks, list) and len(checks) == 1
            and isinstance(checks[0], dict) and checks[0].get("checker") == NO_CHECK)


class _Named(TypedDict, total=False):
    name: str


def _label(check: Check) -> _Named:
    return {"name": check.spec["name"]} if "name" in check.spec else {}


def _one(job: GradeJob, check: Check, ctx: CheckerContext) -> CheckRecord:
    start = time.monotonic()
    try:
        program = checker_program(job.grader, check)
    except ProgramError as exc:
        result: dict[str, Any] = {"ok": False, "notes": f"checker {exc}"}
    else:
        result = run_program(program, check, ctx) if program else _builtin(check, ctx)
    if not result.pop("_broken", False):
        _minimum(check, result)
    _promises(check, ctx.workspace, result)
    result["_weight"] = check.weight
    result["seconds"] = round(time.monotonic() - start, 4)
    return cast(CheckRecord, {"checker": check.checker, **_label(check), **result})


def _builtin(check: Check, ctx: CheckerContext) -> dict[str, Any]:
    from smevals import checkers

    output = read_text(str(ctx.run_dir / "output.txt"))
    inp = checkers.CheckInput(output=output, task=ctx.task, usage=ctx.run.get("usage"),
                              run_dir=ctx.run_dir, workspace=ctx.workspace,
                              timeout=check.timeout, check_name=check.spec.get("name"),
                              judge=judge_context(ctx.job, check) if ctx.job else None,
                              grader_dir=ctx.job.grader.path.parent if ctx.job else None,
                              run_workspace=ctx.tree.path if ctx.tree else None,
                              agent_files=ctx.tree.agent_files if ctx.tree else None)
    return checkers.run_check(check.checker, check.options, inp).as_dict()


def judge_context(job: GradeJob, check: Check, dry: DryCount | None = None) -> JudgeContext:
    """What a judge Check needs: the store (its cache, other models' Runs), the grader's
    judge block, the Run's model (same-family guard)."""
    from smevals.judges.engine import JudgeContext

    record = job.run.record
    task = str(record.get("task", {}).get("name"))

    def find_output(model: str, config: str | None) -> str | None:
        runs = [r for r in job.store.runs() if r.record.get("status") == "ok"
                and r.record.get("task", {}).get("name") == task
                and r.record.get("model") == model
                and (config is None or r.record.get("config", {}).get("name") == config)]
        if not runs:
            return None
        newest = max(runs, key=lambda r: (str(r.record.get("started")), r.id))
        try:
            data = read_checked(job.store.root, newest.rel, newest.record,
                                "output.txt")
        except Damaged as exc:
            job.store.note_damaged(exc.rel, exc.why)
            return None
        return data.decode("utf-8", errors="replace")

    block = job.grader.doc.get("judge")
    return JudgeContext(store_root=job.store.root, use_cache=job.judge_cache,
                        environ=job.environ, grader_judge=block if isinstance(block, dict)
                        else None, grader_dir=job.grader.path.parent,
                        run_model=str(record.get("model", "")), index=check.index,
                        cancel=job.groups.cancelled, find_output=find_output, dry=dry,
                        asked=job.asked)


def _promises(check: Check, workspace: Path, result: dict[str, Any]) -> None:
    if not result["ok"] or not check.creates:
        return
    bad = [f"creates: {why}" for name in check.creates if (why := path_problem(name))]
    if bad:                         # validation refuses these; a file outside never counts
        result["ok"] = False
        result["notes"] = bad[0]
        return
    missing = [name for name in check.creates if not (workspace / name).exists()]
    if missing:
        result["ok"] = False
        result["notes"] = f"did not create promised file(s): {', '.join(missing)}"


def _minimum(check: Check, result: dict[str, Any]) -> None:
    """`min` is the Check's pass mark (as in ai-eval-forge); an errored Check stays one."""
    if check.min_score is None or result.get("error"):
        return
    from smevals.checkers.api import min_verdict

    result["ok"], notes = min_verdict(result["ok"], result.get("score"),
                                      str(result.get("notes") or ""), check.min_score)
    if notes:
        result["notes"] = notes


def tampering_of(job: GradeJob, run_dir: Path,
                 grading: dict[str, Any]) -> tuple[list[dict[str, str]], int]:
    """The Run's tampering marks (grade/tampering.py) and how many were left out."""
    from smevals.grade.tampering import marks_of

    record: dict[str, Any] = dict(job.run.record)
    task = record.get("task")
    return marks_of(job.ev, job.grader, record, run_dir,
                    {**(task if isinstance(task, dict) else {}), **grading})


def grade_record(job: GradeJob, results: list[CheckRecord], grading: dict[str, Any],
                 started: datetime, seconds: float,
                 tampering: tuple[list[dict[str, str]], int] = ([], 0)) -> GradeFields:
    """The Grade record of `job` from its Checks' results and the Run's tampering marks
    (what `smevals grade` writes and `smevals test` compares); `tampering` only when there
    are marks."""
    score = grade_score(job.grader, results)
    outcome = grade_outcome(job.grader, results, score)
    metrics: dict[str, Any] = {}
    tags: list[str] = []
    for result in results:
        metrics.update(result.get("metrics") or {})
        tags.extend(result.get("tags") or [])
        result.pop("_weight", None)
    rec = job.run.record
    judged = judge_usage(results)
    marks, cut = tampering
    extra: dict[str, Any] = {"judge": judged} if judged else {}
    if marks:
        extra["tampering"] = marks
    if cut:
        extra["tampering_cut"] = cut
    return cast(GradeFields, extra | {
        "eval": job.ev.name,
        "run": {"id": job.run.id, "rel": job.run.rel, "task": rec["task"]["name"],
                "config": rec["config"]["name"], "model": rec["model"]},
        "grader": {"name": job.grader.name, "version": job.version, "file": GRADER_COPY},
        "grading_hash": grading_hash(grading), "method": job.grader.method,
        "graded": started.isoformat().replace("+00:00", "Z"),
        "duration_seconds": round(seconds, 4), "outcome": outcome, "score": score,
        "tags": normalize_tags(tags), "metrics": metrics, "checks": results,
        "smevals": _version(),
    })


def judge_usage(results: list[CheckRecord]) -> dict[str, Any]:
    """The judge calls of all Checks summed: calls made, served by the cache, tokens, cost."""
    total: dict[str, Any] = {}
    for result in results:
        usage = (result.get("details") or {}).get("judge")
        if not isinstance(usage, dict):
            continue
        for key in ("calls", "cached", "input_tokens", "output_tokens", "cost_usd"):
            if isinstance(usage.get(key), int | float):
                total[key] = total.get(key, 0) + usage[key]
    return total


def _version() -> str:
    from smevals.version import __version__

    return __version__
