"""Benchmark `smevals log -n 50` on a git history of 50 commits that end with 10,000 Runs
and 10,000 Grades of their current grader version (500 tasks x 4 models x 5 repeats).

Each commit adds a fiftieth of the Runs with their Grades; every fifth also regrades 300
earlier Runs (new Grades of the same version, so the newest counts). Printed: `log -n 50`
cold (no cache at all: every commit read out of git), warm (again: the commits read are
cached), and `report --rev HEAD` / `report` on the newest commit. Targets (issue 26):
log warm <= 3 s, cold <= 20 s, and warm <= 2 x report + 50 ms per commit. Last, the
repository is packed (`git gc`, as a clone is) and `log` timed cold again.

Records are written straight to their folders, as bench/report.py does. Figures are
printed, never asserted.

Usage: python bench/log.py [--tasks 500] [--models 4] [--repeats 5] [--commits 50]
                           [--profile] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import SMOKE, make_eval  # noqa: E402
from bench.report import (  # noqa: E402
    GRADER,
    RUNNER,
    clocked,
    git,
    profile,
    write_grades,
    write_runs,
)

REGRADE_EVERY = 5
REGRADED = 300


def build(root: Path, opts: argparse.Namespace) -> None:
    """The Eval with all its Runs, then the history: each commit adds a slice of them."""
    start = time.perf_counter()
    ev_dir = make_eval(root / "ev", opts.tasks, RUNNER, GRADER)
    hidden = root / "later"
    runs = write_runs(ev_dir, opts.models, opts.repeats)
    (ev_dir / "results" / "runs").rename(hidden)        # brought back a slice per commit
    git(root, "init", "-q")
    size = -(-len(runs) // opts.commits)
    for i in range(opts.commits):
        part = runs[i * size:(i + 1) * size]
        for _oid, rel, _rec in part:
            target = ev_dir / "results" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            (hidden / rel.removeprefix("runs/")).rename(target)
        write_grades(ev_dir, part, offset=10 * len(runs) + i * size)
        if i and i % REGRADE_EVERY == 0:
            earlier = runs[:i * size][-REGRADED:]
            write_grades(ev_dir, earlier, offset=20 * len(runs) + i * REGRADED, flip_every=4)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"results {i}")
    print(f"setup: {opts.commits} commits, {len(runs)} Runs, made in "
          f"{time.perf_counter() - start:.1f}s")


def measure(root: Path, base: Path, opts: argparse.Namespace) -> None:
    n = str(opts.commits)
    env = {"SMEVALS_CACHE_DIR": str(base / "cache")}
    cold = clocked(f"log -n {n}, cold (no cache)", ["log", "ev", "-n", n], env, root)
    warm = clocked(f"log -n {n}, warm", ["log", "ev", "-n", n], env, root)
    clocked(f"log -n {n} --format json, warm", ["log", "ev", "-n", n, "--format", "json"],
            env, root)
    report = clocked("report --rev HEAD, warm", ["report", "ev", "--rev", "HEAD"], env, root)
    clocked("report (working tree), warm", ["report", "ev"], env, root)
    budget = 2 * report + 0.05 * opts.commits
    print(f"targets: warm {warm:.2f}s <= 3 s; cold {cold:.2f}s <= 20 s; warm <= 2 x report "
          f"+ 50 ms x {n} = {budget:.2f}s")
    if not SMOKE:
        git(root, "gc", "-q")
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as empty:
            clocked(f"after git gc (packed, as a clone is): log -n {n}, cold", ["log", "ev",
                    "-n", n], {"SMEVALS_CACHE_DIR": empty}, root)
    if opts.profile:
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as empty:
            os.environ["SMEVALS_CACHE_DIR"] = empty
            profile(["log", "ev", "-n", n], root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--commits", type=int, default=50)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="The smallest size (the tests).")
    parser.add_argument("--keep", metavar="DIR", help="Build in DIR and keep it; when DIR "
                        "already holds the history, only time the commands.")
    opts: Any = parser.parse_args()
    if opts.smoke or SMOKE:
        opts.tasks, opts.models, opts.repeats, opts.commits = 6, 1, 1, 3
    if opts.keep:
        run_in(Path(opts.keep), opts)
        return
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        run_in(Path(tmp), opts)


def run_in(base: Path, opts: argparse.Namespace) -> None:
    root = base / "repo"
    if not (root / ".git").is_dir():
        root.mkdir(parents=True, exist_ok=True)
        build(root, opts)
    measure(root, base, opts)


if __name__ == "__main__":
    main()
