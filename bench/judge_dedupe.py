"""Count the judge requests one `grade` sends when Runs repeat an output: N Tasks, S
samples of each (the runner answers the same every time, so the S Runs of a Task build the
same judge request), graded at -j 4 against the tests' fake server answering after DELAY
seconds, first afresh, then with --no-judge-cache. Each distinct request should be sent once.

Usage: python bench/judge_dedupe.py [N] [S] [DELAY]   (default 11 Tasks, 3 samples, 0.2 s)
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import judged_eval, timed  # noqa: E402


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    samples = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    delay = float(sys.argv[3]) if len(sys.argv) > 3 else 0.2
    with judged_eval(n, delay) as (server, ev, env):
        timed(["run", str(ev), "-n", str(samples), "-j", "8"], env)
        for args in (["grade"], ["regrade", "--no-judge-cache"]):
            before = len(server.requests)
            wall = timed([*args, str(ev), "-j", "4"], env)
            print(f"{' '.join(args)} -j 4: {n * samples} judge Checks, {n} distinct "
                  f"requests, {len(server.requests) - before} sent, {wall:.2f}s")


if __name__ == "__main__":
    main()
