"""Benchmark `smevals run --dask`: throughput with 1, 2 and 4 local worker processes on a
latency-bound runner (it sleeps 200 ms), and smevals' per-Run overhead on Dask against
local `-j` with a runner that returns at once.

Usage: python bench/scale_out.py [N]   (default 60 Runs per throughput measurement, 4N for
the overhead). Needs the `dask` extra. Each figure is the best of a few tries (the
machine may be shared) and comes from a run of N Runs less a run of 1, so the fixed
cost of a command (start-up, connecting, shipping the Eval) is left out; that fixed
cost is printed on its own.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import SMOKE, make_eval, timed  # noqa: E402

SLEEPY = '#!/bin/sh\nsleep 0.2\necho "$SMEVALS_MODEL: $SMEVALS_PROMPT"\n'
QUICK = '#!/bin/sh\necho "$SMEVALS_MODEL: $SMEVALS_PROMPT"\n'
GRADER = "checks:\n  - checker: contains\n    value: m1\n"


def cluster(workers: int):  # type: ignore[no-untyped-def]
    from distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                        dashboard_address=":0")


def per_run(tmp: Path, name: str, runner: str, n: int, extra: list[str],
            tries: int = 3) -> tuple[float, float]:
    """(seconds per Run, fixed seconds per command): the best of `tries` runs of 1 Run
    and of n Runs, each into a fresh store (the best, because the machine may be shared)."""
    env = {"SMEVALS_CACHE_DIR": str(tmp / "cache")}
    best = []
    for size in (1, n):
        ev = make_eval(tmp / f"{name}-{size}", size, runner, GRADER)
        best.append(min(timed(["run", str(ev), "--store", str(tmp / f"s-{name}-{size}-{i}"),
                               *extra], env) for i in range(tries)))
    per = (best[1] - best[0]) / (n - 1)
    return per, best[0] - per


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as name:
        tmp = Path(name)
        rates = {}
        for workers in (1,) if SMOKE else (1, 2, 4):
            with cluster(workers) as cl:
                per, fixed = per_run(tmp, f"sleepy{workers}", SLEEPY, n,
                                     ["--dask", cl.scheduler_address], tries=1 if SMOKE else 2)
            rates[workers] = 1 / per
            print(f"--dask, {workers} worker(s), runner sleeps 200 ms: {rates[workers]:.1f} "
                  f"Runs/s ({rates[workers] / rates[1]:.2f}x 1 worker); fixed cost "
                  f"{fixed:.2f}s per command")
        quick = n if SMOKE else 4 * n
        local, local_fixed = per_run(tmp, "local", QUICK, quick, ["-j", "2"])
        with cluster(1 if SMOKE else 2) as cl:
            remote, remote_fixed = per_run(tmp, "remote", QUICK, quick,
                                           ["--dask", cl.scheduler_address],
                                           tries=1 if SMOKE else 3)
        print(f"quick runner, local -j 2: {local * 1000:.1f} ms/Run (fixed {local_fixed:.2f}s)")
        print(f"quick runner, --dask with 2 workers: {remote * 1000:.1f} ms/Run (fixed "
              f"{remote_fixed:.2f}s); overhead on Dask {(remote - local) * 1000:+.1f} ms/Run")


if __name__ == "__main__":
    main()
