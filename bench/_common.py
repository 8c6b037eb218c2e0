"""Helpers for the benchmarks: a temporary Eval and the `smevals` command of this venv."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tools.fake_openai import FakeOpenAI

SMEVALS = str(Path(sys.executable).parent / "smevals")

# SMEVALS_BENCH_SMOKE=1: the smoke run of tests/bench/test_bench_smoke.py. The test gives each
# script its smallest sizes; a script whose work is not all sized by its arguments (repeats,
# clusters of several sizes) does each step once. The figures then mean nothing.
SMOKE = os.environ.get("SMEVALS_BENCH_SMOKE") == "1"

ANSWER_RUNNER = '#!/bin/sh\necho "answer: $SMEVALS_TASK_EXPECTED"\n'


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


@contextmanager
def judged_eval(tasks: int, delay: float) -> Iterator[tuple[FakeOpenAI, Path, dict[str, str]]]:
    """The tests' fake OpenAI-compatible server, answering every judge call with a passing
    verdict after `delay` seconds; a temporary Eval (under BENCH_DIR) of `tasks` Tasks whose
    runner answers each Task's `expected`, graded by one llm_judge Check that asks the server;
    and the environment giving smevals a cache folder of its own there."""
    from tools.fake_openai import FakeOpenAI, Scripted, completion

    verdict = json.dumps({"reason": "fine", "pass": True})
    server = FakeOpenAI().start()
    server.respond_with(lambda _request: Scripted(200, completion(verdict), delay=delay))
    grader = (f"judge: {{model: bench-judge, base_url: '{server.base_url}'}}\n"
              "checks:\n  - checker: llm_judge\n    rubric: Is the answer given?\n")
    try:
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
            env = {"SMEVALS_CACHE_DIR": str(Path(tmp) / "cache")}
            yield server, make_eval(Path(tmp) / "ev", tasks, ANSWER_RUNNER, grader), env
    finally:
        server.close()


def timed_calls(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median and best milliseconds of `fn()` over `repeats` calls."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), min(times)
