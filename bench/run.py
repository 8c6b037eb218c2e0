"""Benchmark `smevals run`: Runs per second at -j 1 and -j 8, and smevals' own overhead per Run.

Usage: python bench/run.py [N]   (default 1000 Runs of a trivial runner script)
"""

from __future__ import annotations

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


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        env = {"SMEVALS_CACHE_DIR": str(Path(tmp) / "cache")}
        for jobs in (1, 8):
            ev = make_eval(
                Path(tmp) / f"ev{jobs}",
                n,
                RUNNER,
                "checks:\n  - checker: contains\n    value: m1\n",
            )
            wall = timed(["run", str(ev), "-j", str(jobs)], env)
            base = direct(ev / "configs" / "r.sh", n, jobs)
            print(
                f"run -j {jobs}: {n} Runs in {wall:.2f}s = {n / wall:.0f} Runs/s; "
                f"starting the runner directly: {base:.2f}s; smevals overhead "
                f"{(wall - base) / n * 1000:.2f} ms/Run"
            )


if __name__ == "__main__":
    main()
