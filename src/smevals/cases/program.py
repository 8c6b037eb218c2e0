"""The checker program of an imported ai-eval-forge Eval (`graders/forge-case`).

It grades one Run as ai-eval-forge scores one case: the Run's `output.txt` is the case's
`actual`; the Task's grading data holds its `checks`, `expected` and `sources` (the current
Task file while it exists, else the copy recorded with the Run, as smevals itself chooses).
It prints the checker JSON (score, metrics, tags, notes, details.checks) and exits 0 when
the case passes, 1 when it fails, 2 when the case cannot be scored.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from smevals.cases.casefile import ForgeInputError, make_case
from smevals.cases.scoring import score_case

PROGRAM = '''\
#!/usr/bin/env python3
"""Grades one Run the way ai-eval-forge scores one case (written by `smevals import
ai-eval-forge`). The case's checks, expected value and sources are the Task's `grading:`
data: edit them there. It needs the Python that runs smevals: `python3` if it imports
smevals, else the interpreter of the smevals process that started it, or of `smevals` on PATH."""
import os
import shutil
import sys


def interpreters():
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:   # Linux: the grading smevals
            yield f.read().split(b"\\0")[0].decode()
    except OSError:
        pass
    exe = shutil.which("smevals")
    if exe:
        with open(exe, "rb") as f:
            head = f.readline().decode(errors="replace")
        if head.startswith("#!"):
            yield head[2:].strip()


try:
    from smevals.cases.program import main
except ImportError:
    if not os.environ.get("SMEVALS_FORGE_REEXEC"):
        os.environ["SMEVALS_FORGE_REEXEC"] = "1"
        for python in interpreters():
            if os.path.isabs(python) and "python" in os.path.basename(python) \\
                    and os.access(python, os.X_OK):
                os.execv(python, [python, __file__])
    sys.exit("forge-case: cannot import smevals; activate the environment smevals is in")
sys.exit(main())
'''


def task_view() -> dict[str, Any]:
    """The Task's keys with its grading keys on top, as checkers see them."""
    name = os.environ.get("SMEVALS_TASK", "")
    path = Path(os.environ.get("SMEVALS_EVAL_DIR", ".")) / "tasks" / f"{name}.yaml"
    if path.is_file():
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    else:
        record = json.loads(_run_file("run.json"))
        doc = {**record.get("task", {}), "grading": record.get("grading") or {}}
    grading = doc.get("grading") or {}
    return {**doc, **grading}


def _run_file(name: str) -> str:
    return (Path(os.environ["SMEVALS_RUN_DIR"]) / name).read_text(encoding="utf-8")


def case_of(task: dict[str, Any], output: str) -> dict[str, Any]:
    """The ai-eval-forge case object this Run stands for."""
    case: dict[str, Any] = {"id": task.get("case_id") or task.get("name"), "actual": output}
    for key in ("expected", "sources", "checks"):
        if key in task:
            case[key] = task[key]
    return case


def main() -> int:
    try:
        task = task_view()
        case = make_case(case_of(task, _run_file("output.txt")), 0, f"task {task.get('name')}")
        result = score_case(case)
    except ForgeInputError as exc:
        print(json.dumps({"notes": str(exc)}))
        return 2
    failed = [c["type"] for c in result["checks"] if not c["passed"]]
    out: dict[str, Any] = {
        "score": result["score"],
        "metrics": {"checks": len(result["checks"]),
                    "checks_passed": len(result["checks"]) - len(failed)},
        "tags": sorted({f"failed_{kind}" for kind in failed}),
        "details": {"case": result["id"], "passed": result["passed"],
                    "checks": result["checks"]},
    }
    if failed:
        out["notes"] = f"failed checks: {', '.join(failed)}"
    print(json.dumps(out))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
