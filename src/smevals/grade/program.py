"""The checker-program contract: no arguments, the contract's environment, the shared
workspace as working directory, stdin closed, exit 0 a pass, optional JSON on stdout."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals.evaldef.model import Check
from smevals.grade.normalise import parse_stdout
from smevals.proc.env import clean_base, scalar_vars, to_json
from smevals.proc.launch import ProcessGroups, launch
from smevals.store.records import RunFields

if TYPE_CHECKING:
    from smevals.grade.job import GradeJob
    from smevals.grade.tree import FinalTree

DEFAULT_TIMEOUT = 300.0
OUTPUT_CAP = 1 << 20


@dataclass(frozen=True)
class CheckerContext:
    run_dir: Path
    workspace: Path
    run: RunFields               # the Run record
    task: dict[str, Any]         # the Task's keys with grading keys on top
    eval_dir: Path
    environ: dict[str, str]
    groups: ProcessGroups
    job: GradeJob | None = None  # built-in checkers that need the store
    tree: FinalTree | None = None   # a Run with starting files: its final tree, built lazily


def checker_env(check: Check, ctx: CheckerContext) -> dict[str, str]:
    env = clean_base(ctx.environ)
    config = ctx.run.get("config") or {}
    env.update(scalar_vars("SMEVALS_TASK_", ctx.task))
    env.update(scalar_vars("SMEVALS_CONFIG_", config))
    env.update(scalar_vars("SMEVALS_CHECK_", check.spec))
    env.update({
        "SMEVALS_CHECK": to_json(check.spec),
        "SMEVALS_TASK": str(ctx.task.get("name", "")),
        "SMEVALS_RUN_DIR": str(ctx.run_dir.absolute()),
        "SMEVALS_GRADE_DIR": str(ctx.workspace.absolute()),
        "SMEVALS_EVAL_DIR": str(ctx.eval_dir.absolute()),
        "SMEVALS_MODEL": str(ctx.run.get("model", "")),
        "SMEVALS_CONFIG": to_json(config),
        "SMEVALS_USAGE": to_json(ctx.run.get("usage")),
    })
    if "prompt" in ctx.task:
        env["SMEVALS_PROMPT"] = str(ctx.task["prompt"])
    if ctx.tree is not None and ctx.run.get("workspace"):   # TreeError: the Check fails
        env["SMEVALS_RUN_WORKSPACE"] = str(ctx.tree.path())
    return env


def run_program(program: Path, check: Check, ctx: CheckerContext) -> dict[str, Any]:
    """One Check by a program: {"ok", "score"?, "metrics"?, "tags"?, "notes"?, "details"?}."""
    from smevals.grade.tree import TreeError

    timeout = check.timeout or DEFAULT_TIMEOUT
    try:
        env = checker_env(check, ctx)
    except TreeError as exc:
        return {"ok": False, "notes": f"SMEVALS_RUN_WORKSPACE: {exc}"}
    fin = launch([str(program)], ctx.workspace, env, timeout, ctx.groups,
                 cap=OUTPUT_CAP, what="checker")
    if fin.failure in ("launch", "timeout", "signal"):
        return {"ok": False, "notes": f"checker {fin.detail}"}
    result, problem = _read_stdout(fin.stdout, fin.written.get("stdout"))
    result["ok"] = fin.exit_code == 0 and problem is None
    if problem:
        result["notes"] = problem + (f" ({result['notes']})" if result.get("notes") else "")
        result["_broken"] = True        # fails closed: a `min` cannot pass it (grade.apply)
    elif fin.exit_code != 0 and "notes" not in result:
        err = fin.stderr.decode("utf-8", "replace").strip()
        result["notes"] = err[-2000:] if err else f"checker exited with status {fin.exit_code}"
    return result


def _read_stdout(data: bytes, written: int | None) -> tuple[dict[str, Any], str | None]:
    """The checker's JSON from stdout; `written` is how much it printed when over the cap
    (only the first OUTPUT_CAP bytes were kept, the rest read and dropped)."""
    if written is not None:
        kept = data.decode("utf-8", "replace")
        return {"details": {"output": kept}}, (
            f"checker printed {written} bytes, over the {OUTPUT_CAP}-byte cap (kept truncated)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return {"details": {"output": data.decode("utf-8", "replace")}}, (
            "checker output is not valid UTF-8")
    return parse_stdout(text)
