"""Benchmark judge Checks: N Runs graded by one llm_judge Check against the fake
OpenAI-compatible server of the tests, answering after DELAY seconds, at -j 1 and -j 8
(judge calls overlap across Runs), then once more with every answer from the judge cache.

Usage: python bench/judge.py [N] [DELAY]   (default 160 Runs, 0.2 s)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import judged_eval, timed  # noqa: E402


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 160
    delay = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
    with judged_eval(n, delay) as (server, ev, env):
        timed(["run", str(ev), "-j", "8"], env)
        rates = {}
        for jobs in (1, 8):
            before = len(server.requests)
            wall = timed(["regrade", str(ev), "-j", str(jobs), "--no-judge-cache"], env)
            calls = len(server.requests) - before
            rates[jobs] = n / wall
            print(f"-j {jobs}: {n} judge Checks ({calls} calls, server answers in "
                  f"{delay:g} s) in {wall:.2f}s = {rates[jobs]:.1f} Checks/s")
        print(f"speed-up at -j 8: {rates[8] / rates[1]:.1f}x")
        before = len(server.requests)
        wall = timed(["regrade", str(ev), "-j", "8"], env)
        print(f"from the judge cache, -j 8: {n} judge Checks ({len(server.requests) - before}"
              f" calls) in {wall:.2f}s = {n / wall:.0f} Checks/s")


if __name__ == "__main__":
    main()
