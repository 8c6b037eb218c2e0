"""Benchmark `smevals run`: Runs per second at -j 1 and -j 8, and smevals' own overhead per Run.

For N Runs of a one-line shell runner (an Eval of N Tasks, a built-in check, no grading):
the wall time of `smevals run`, against starting the same runner N times directly. The
overhead per Run is given twice: the whole difference over N (start-up included), and with
the start-up taken off, where the start-up is `smevals run` of a one-Task Eval less one
direct start (the Python start, the imports, the guardian, one plan). Each figure is the
best of `--trials` (default 3) trials, each into fresh stores.

Usage: python bench/run.py [N] [--trials T]   (default 1000 Runs of a trivial runner script)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import make_eval, timed  # noqa: E402

RUNNER = '#!/bin/sh\necho "$SMEVALS_MODEL: $SMEVALS_PROMPT"\n'
Clock = tuple[float, float]
CHECK = "checks:\n  - checker: contains\n    value: m1\n"


def direct(script: Path, n: int, workers: int) -> float:
    """The cost of starting the same runner n times without smevals."""
    env = {**os.environ, "SMEVALS_MODEL": "m1", "SMEVALS_PROMPT": "hi"}

    def one(_: int) -> None:
        subprocess.run(
            [str(script)],
            env=env,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            check=True,
        )

    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(n)))
    return time.perf_counter() - start


def trial(tmp: Path, name: str, tasks: int, jobs: int, env: dict[str, str]) -> Clock:
    """(smevals run, the same runner started directly) wall seconds, for a fresh Eval."""
    ev = make_eval(tmp / name, tasks, RUNNER, CHECK)
    return timed(["run", str(ev), "-j", str(jobs)], env), direct(ev / "configs" / "r.sh",
                                                                  tasks, jobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", nargs="?", type=int, default=1000)
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()
    n = args.n
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        env = {"SMEVALS_CACHE_DIR": str(Path(tmp) / "cache")}
        ones = [trial(Path(tmp), f"one-{t}", 1, 1, env) for t in range(args.trials)]
        startup = min(wall for wall, _ in ones) - min(base for _, base in ones)
        for jobs in (1, 8):
            trials = [trial(Path(tmp), f"ev{jobs}-{t}", n, jobs, env) for t in range(args.trials)]
            wall, base = min(w for w, _ in trials), min(b for _, b in trials)
            print(
                f"run -j {jobs}: {n} Runs in {wall:.2f}s = {n / wall:.0f} Runs/s; "
                f"starting the runner directly: {base:.2f}s; smevals overhead "
                f"{(wall - base) / n * 1000:.2f} ms/Run, "
                f"{(wall - base - startup) / n * 1000:.2f} ms/Run with the start-up "
                f"({startup * 1000:.0f} ms) taken off (best of {args.trials} trials)"
            )


if __name__ == "__main__":
    main()
