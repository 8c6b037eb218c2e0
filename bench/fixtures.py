"""How long `smevals test` takes: the shipped suites' fixtures, and N copies of a fixture
for a built-in check and for a checker program (one process per case).

Run: PYTHONPATH=. python bench/fixtures.py [--cases 200]
Prints seconds and cases per second; no target (a checker program costs one process).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import make_eval, timed, write  # noqa: E402

PROGRAM = "#!/bin/sh\ngrep -q . \"$SMEVALS_RUN_DIR/output.txt\"\n"


def many(root: Path, cases: int, checker: str) -> Path:
    grader = f"checks:\n  - checker: {checker}\n" + ("    value: answer\n"
                                                      if checker == "contains" else "")
    ev = make_eval(root, 1, "#!/bin/sh\necho answer\n", grader)
    write(ev / "graders" / "check.sh", PROGRAM, executable=True)
    for i in range(cases):
        write(ev / "graders" / "default.fixtures" / f"c{i:05d}.yaml",
              f"task: t00000\noutput: answer {i}\nexpect: pass\n")
    return ev


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=200)
    args = parser.parse_args()
    suites = ROOT / "suites"
    n = sum(1 for _ in suites.glob("*/graders/*.fixtures/*.yaml"))
    seconds = timed(["test", str(suites)])
    print(f"smevals test suites: {n} cases in {seconds:.2f} s")
    for checker in ("contains", "./check.sh"):
        with tempfile.TemporaryDirectory() as tmp:
            ev = many(Path(tmp) / "ev", args.cases, checker)
            seconds = timed(["test", str(ev)])
            print(f"{args.cases} cases, checker {checker}: {seconds:.2f} s "
                  f"({args.cases / seconds:.0f} cases/s)")


if __name__ == "__main__":
    main()
