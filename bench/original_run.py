"""`smevals run -g` side by side with the original smevals (0.2.0): N Runs graded as made.

One Eval of N tasks (default 300), a one-line shell runner and a grader of one checker
program (a shell script that reads `output.txt` and prints a JSON score), the same files in
both layouts. Each trial runs `run EV -g` of the original (which attempts one Task at a
time) and `run EV -g -j JOBS` of this smevals (default `-j 4`) into fresh stores,
alternating, so both see the same load. Printed: wall and CPU (the command and its
children: user + system) per side, the minimum and the spread over the trials, and the
ratio of the minimum wall times. The machine's load average is printed beside them.

The original must be installed in a venv of its own (see bench/original.py):
    python3 -m venv /tmp/orig-venv && /tmp/orig-venv/bin/pip install smevals==0.2.0

`--against PATH` times another installation's smevals too (say a venv of main), in the
same trials, so the ratios of both come from one run.

Usage: python bench/original_run.py [--original PATH|none] [--ours PATH] [--against PATH]
                                    [-n 300] [-j 4] [--trials 3] [--checker python|sh]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import SMEVALS, SMOKE, write  # noqa: E402
from bench.original import timed  # noqa: E402

RUNNER = '#!/bin/sh\necho "$SMEVALS_MODEL: $SMEVALS_PROMPT"\n'
CHECKERS = {
    "sh": ('#!/bin/sh\nif grep -q m1 "$SMEVALS_RUN_DIR/output.txt"; then\n'
           '  echo \'{"score": 1, "metrics": {"ok": true}}\'\nelse\n  exit 1\nfi\n'),
    "python": (f"#!{sys.executable}\nimport json, os, sys\n"
               "with open(os.path.join(os.environ['SMEVALS_RUN_DIR'], 'output.txt')) as f:\n"
               "    ok = 'm1' in f.read()\n"
               "print(json.dumps({'score': 1 if ok else 0, 'metrics': {'ok': ok}}))\n"
               "sys.exit(0 if ok else 1)\n"),
}


def make(root: Path, tasks: int, checker: str) -> Path:
    """The Eval, readable by both (the original wants each Task's and the grader's name)."""
    write(root / "eval.yaml", "name: bench\n")
    for i in range(tasks):
        write(root / "tasks" / f"t{i:05d}.yaml", f"name: t{i:05d}\nprompt: task number {i}\n")
    write(root / "configs" / "default.yaml", "runner: ./r.sh\nmodel: m1\n")
    write(root / "configs" / "r.sh", RUNNER, executable=True)
    write(root / "graders" / "default.yaml", "name: default\nchecks:\n  - checker: ./c.sh\n")
    write(root / "graders" / "c.sh", CHECKERS[checker], executable=True)
    return root


def spread(values: list[tuple[float, float]]) -> str:
    walls, cpus = sorted(v[0] for v in values), sorted(v[1] for v in values)
    return (f"wall {walls[0]:.2f} s ({walls[0]:.2f}-{walls[-1]:.2f}), "
            f"CPU {cpus[0]:.2f} s ({cpus[0]:.2f}-{cpus[-1]:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--original", default="/tmp/orig-venv/bin/smevals",
                        help="the original's smevals; `none` times this one alone")
    parser.add_argument("--ours", default=SMEVALS, help="this smevals' command")
    parser.add_argument("--against", metavar="PATH",
                        help="another installation's smevals, timed alongside at the same -j")
    parser.add_argument("-n", type=int, default=300, help="Tasks, one Run each (300)")
    parser.add_argument("-j", type=int, default=4, help="this smevals' -j (4)")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--checker", choices=sorted(CHECKERS), default="python",
                        help="the checker program: a Python script (default) or a shell one")
    opts = parser.parse_args()
    sides = {"original 0.2.0": [opts.original, "run", "{ev}", "-g"],
             "this smevals": [opts.ours, "run", "{ev}", "-g", "-j", str(opts.j)]}
    if opts.against:
        sides["the other smevals"] = [opts.against, "run", "{ev}", "-g", "-j", str(opts.j)]
    if opts.original == "none" or not os.access(opts.original, os.X_OK):
        if not SMOKE and opts.original != "none":
            raise SystemExit(f"no original smevals at {opts.original}; see the docstring")
        del sides["original 0.2.0"]
    found: dict[str, list[tuple[float, float]]] = {label: [] for label in sides}
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        for trial in range(opts.trials):
            # every trial a new Eval, nothing removed until the end: on a file system that
            # makes a new file dearer after removals (docs/performance.md, "Why creating
            # files slows down"), removing one trial's store would slow the next one's
            evs = {label: make(Path(tmp) / f"ev{i}-{trial}", opts.n, opts.checker)
                   for i, label in enumerate(sides)}
            for i, (label, (exe, *args)) in enumerate(sides.items()):
                env = {"SMEVALS_CACHE_DIR": str(Path(tmp) / f"cache{i}")}   # one each
                found[label].append(timed(exe, [a.format(ev=evs[label]) for a in args],
                                          Path(tmp), env))
    for label, values in found.items():
        print(f"{label}: run -g of {opts.n} Runs, {opts.trials} trials: {spread(values)} "
              f"(load average {os.getloadavg()[0]:.1f})")
    best = {label: min(v[0] for v in values) for label, values in found.items()}
    for label in ("this smevals", "the other smevals"):
        if "original 0.2.0" in best and label in best:
            print(f"{label} at -j {opts.j} is {best['original 0.2.0'] / best[label]:.2f}x the "
                  f"original's speed (load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
