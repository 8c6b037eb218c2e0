"""Helpers for the benchmarks: a temporary Eval and the `smevals` command of this venv."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

SMEVALS = str(Path(sys.executable).parent / "smevals")


def write(path: Path, text: str, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if executable:
        path.chmod(0o755)


def make_eval(root: Path, tasks: int, runner: str, grader: str) -> Path:
    write(root / "eval.yaml", "name: bench\n")
    for i in range(tasks):
        write(root / "tasks" / f"t{i:05d}.yaml", f"prompt: task number {i}\nexpected: {i}\n")
    write(root / "configs" / "default.yaml", "runner: ./r.sh\nmodel: m1\n")
    write(root / "configs" / "r.sh", runner, executable=True)
    write(root / "graders" / "default.yaml", grader)
    return root


def timed(args: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        [SMEVALS, *args], capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"smevals {' '.join(args)} failed:\n{proc.stderr}")
    return elapsed
