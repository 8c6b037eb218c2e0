"""Benchmark grading: N Runs graded at -j 1 and -j 8 by (a) three built-in checks and
(b) the same plus a checker program.

Usage: python bench/grade.py [N]   (default 10000)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import make_eval, timed, write  # noqa: E402

RUNNER = '#!/bin/sh\necho "answer: $SMEVALS_TASK_EXPECTED"\n'
BUILTINS = """checks:
  - checker: contains
    value: answer
  - checker: regex
    pattern: "answer: [0-9]+"
  - checker: exact
    value: {task: expected}
"""
PROGRAM = BUILTINS + "  - checker: ./check.sh\n"
CHECK = '#!/bin/sh\necho \'{"score": 1, "metrics": {"ok": true}}\'\n'


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        env = {"SMEVALS_CACHE_DIR": str(Path(tmp) / "cache")}
        ev = make_eval(Path(tmp) / "ev", n, RUNNER, BUILTINS)
        write(ev / "graders" / "program.yaml", PROGRAM)
        write(ev / "graders" / "check.sh", CHECK, executable=True)
        made = timed(["run", str(ev), "-j", "8"], env)
        print(f"setup: {n} Runs made in {made:.1f}s")
        for grader, label in (
            ("default", "(a) 3 built-in checks"),
            ("program", "(b) 3 built-ins + a checker program"),
        ):
            for jobs in (1, 8):
                wall = timed(["regrade", str(ev), "-g", grader, "-j", str(jobs)], env)
                print(f"{label}, -j {jobs}: {n} Grades in {wall:.2f}s = {n / wall:.0f} Grades/s")


if __name__ == "__main__":
    main()
