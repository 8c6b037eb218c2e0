"""Benchmark judge answers on a Dask cluster: N Runs graded by one llm_judge Check on a
LocalCluster of 2 worker processes, first with every call made (the fake OpenAI server of
the tests answers after DELAY seconds), then regraded with every answer shipped from the
store's judge cache; the judge calls each makes, and local regrades for comparison.

Usage: python bench/judge_cluster.py [N] [DELAY]   (default 100 Runs, 0.05 s). Needs the
`dask` extra.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import judged_eval, timed  # noqa: E402


def main() -> None:
    from distributed import LocalCluster

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    try:
        with judged_eval(n, delay) as (server, ev, env):
            timed(["run", str(ev), "-j", "4"], env)
            steps = [("grade --dask (calls made)", ["grade", "--dask", cluster.scheduler_address]),
                     ("regrade --dask (from the cache)",
                      ["regrade", "--dask", cluster.scheduler_address]),
                     ("regrade -j 2 locally (from the cache)", ["regrade", "-j", "2"])]
            for label, args in steps:
                before = len(server.requests)
                wall = timed([args[0], str(ev), *args[1:]], env)
                print(f"{label}: {n} Runs, {len(server.requests) - before} judge calls, "
                      f"{wall:.2f}s = {n / wall:.0f} Grades/s")
    finally:
        cluster.close()


if __name__ == "__main__":
    main()
