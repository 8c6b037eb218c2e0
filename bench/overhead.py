"""smevals' own cost per Run and per Grade, against bare execs of the same programs.

For N Runs of a one-line shell runner at `-j 1`: the wall time of `smevals run` minus
one start-up (the time of the same command making one Run, minus one bare exec), the
time of N bare execs of the runner (spawned as smevals spawns it: fork/exec of the
script, its own session, stdin closed, stdout and stderr read through pipes, the same
environment variables), and the difference per Run. The same for N Grades by a grader
of two checker programs (`regrade -j 1`) against 2N bare execs of those programs.

The machine may be shared: each figure is the minimum of several trials (`--trials`),
and the spread (min-max) is printed beside it. Every trial writes into a fresh store.

`--against OTHER_SMEVALS` times another installation's `smevals` executable too (say
a venv of the previous commit), alternating with this one trial by trial, so that both
see the same load: the before/after table of docs/performance.md.

Usage: python bench/overhead.py [-n N] [--trials T] [--smoke] [--against PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench import _common  # noqa: E402
from bench._common import make_eval, write  # noqa: E402

RUNNER = '#!/bin/sh\necho "$SMEVALS_MODEL: $SMEVALS_PROMPT"\n'
CHECK_A = '#!/bin/sh\ngrep -q m1 "$SMEVALS_RUN_DIR/output.txt"\n'
CHECK_B = '#!/bin/sh\necho \'{"score": 1, "metrics": {"ok": true}}\'\n'
GRADER = "checks:\n  - checker: ./a.sh\n  - checker: ./b.sh\n"


def bare(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    """One exec of `argv` the way smevals starts a child (without smevals around it)."""
    subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                   start_new_session=True, check=False)


def bare_runs(ev: Path, n: int) -> float:
    env = {**os.environ, "SMEVALS_MODEL": "m1", "SMEVALS_PROMPT": "task number 1"}
    script = str(ev / "configs" / "r.sh")
    start = time.perf_counter()
    for _ in range(n):
        bare([script], ev, env)
    return time.perf_counter() - start


def bare_grades(ev: Path, n: int, run_dir: Path) -> float:
    env = {**os.environ, "SMEVALS_RUN_DIR": str(run_dir), "SMEVALS_MODEL": "m1"}
    scripts = [str(ev / "graders" / "a.sh"), str(ev / "graders" / "b.sh")]
    start = time.perf_counter()
    for _ in range(n):
        for script in scripts:
            bare([script], ev, env)
    return time.perf_counter() - start


def spread(values: list[float]) -> str:
    return f"{min(values):.2f} s (trials {min(values):.2f}-{max(values):.2f} s)"


def results(ev: Path) -> Path:
    return ev / "results"


def fresh_store(ev: Path, base: Path | None) -> None:
    shutil.rmtree(results(ev), ignore_errors=True)
    if base is not None:
        shutil.copytree(base, results(ev), symlinks=True)


def one_run_dir(ev: Path) -> Path:
    return next(p.parent for p in results(ev).rglob("run.json"))


def timed(exe: str, args: list[str], env: dict[str, str]) -> float:
    _common.SMEVALS = exe
    return _common.timed(args, env)


def measure(label: str, unit: str, n: int, trials: int, exes: list[str],
            command: Callable[[str, Path], float], base: Callable[[Path, int], float],
            evs: tuple[Path, Path]) -> None:
    """Time `command` with each executable on the N-item Eval and on the 1-item one
    (`trials` times each, alternating, the minimum counts), and `base` (the bare execs)
    for N and for 1."""
    big, small = evs
    walls: dict[str, list[float]] = {exe: [] for exe in exes}
    ones: dict[str, list[float]] = {exe: [] for exe in exes}
    bares, bare_ones = [], []
    for _ in range(trials):
        for exe in exes:
            ones[exe].append(command(exe, small))
            walls[exe].append(command(exe, big))
        bares.append(base(big, n))
        bare_ones.append(base(big, 1))
    print(f"{label}: {n} bare execs{' (x2)' if unit == 'Grade' else ''} {spread(bares)}")
    for exe in exes:
        startup = min(ones[exe]) - min(bare_ones)
        own = min(walls[exe]) - startup
        per = (own - min(bares)) / n * 1000
        print(f"  {exe}: {spread(walls[exe])}; start-up (one {unit}, less its execs) "
              f"{startup:.2f} s; without start-up {own:.2f} s")
        print(f"    smevals' own cost: {per:.2f} ms per {unit}")


def fsync_figures(root: Path, n: int, trials: int) -> None:
    """What each way of making an object durable costs on this file system: n objects of
    two small files each, renamed into a new folder per object as in the store, made durable
    (a) one fsync after another, and the new folder and its parent fsynced at once (before
    #25), (b) all of an object's fsyncs at once, folders at once, (c) as (b) but the
    folders fsynced once for the batch (now)."""
    from smevals.files.durable import defer_fsync, fsync_tree, sync_pending

    def one_by_one(folder: str) -> None:
        for path in (f"{folder}/output.txt", f"{folder}/run.json", folder):
            fd = os.open(path, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)

    def parent_now(folder: str) -> None:        # the new folder's parent, then the folder
        for path in (os.path.dirname(folder), folder):
            fd = os.open(path, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)

    def parent_later(folder: str) -> None:
        defer_fsync(os.path.dirname(folder))
        defer_fsync(folder)

    ways = {"(a) one fsync after another, parent each time": (one_by_one, parent_now),
            "(b) an object's fsyncs at once, parent each time": (fsync_tree, parent_now),
            "(c) an object's fsyncs at once, parents per batch": (fsync_tree, parent_later)}
    times: dict[str, list[float]] = {way: [] for way in ways}
    for trial in range(trials):
        for way, (sync, parent) in ways.items():
            base = root / f"fsync-{trial}-{len(times[way])}-{way[1]}"
            start = time.perf_counter()
            for i in range(n):
                stage, cell = base / ".staging" / str(i), base / "runs" / f"t{i}"
                stage.mkdir(parents=True)
                (stage / "output.txt").write_text("m1: task\n")
                (stage / "run.json").write_text("{}\n")
                sync(str(stage))
                cell.mkdir(parents=True)
                os.rename(stage, cell / "obj")
                parent(str(cell))
            sync_pending()
            times[way].append(time.perf_counter() - start)
            shutil.rmtree(base)
    print(f"making {n} objects durable (write, fsync, rename, parent fsync):")
    for way, values in times.items():
        print(f"  {way}: {min(values) / n * 1000:.2f} ms per object "
              f"(trials {min(values) / n * 1000:.2f}-{max(values) / n * 1000:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="Runs and Grades (default 200)")
    parser.add_argument("--trials", type=int, default=5, help="trials, minimum kept (5)")
    parser.add_argument("--smoke", action="store_true", help="20 Runs, 2 trials")
    parser.add_argument("--against", metavar="PATH", help="another `smevals` to time too")
    args = parser.parse_args()
    exes = [_common.SMEVALS, *([args.against] if args.against else [])]
    n, trials = (20, 2) if args.smoke else (args.n, args.trials)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        env = {"SMEVALS_CACHE_DIR": str(Path(tmp) / "cache")}
        evs = tuple(make_eval(Path(tmp) / name, size, RUNNER, GRADER)
                    for name, size in (("big", n), ("small", 1)))
        for ev in evs:
            write(ev / "graders" / "a.sh", CHECK_A, executable=True)
            write(ev / "graders" / "b.sh", CHECK_B, executable=True)
        big, small = evs[0], evs[1]

        def run(exe: str, ev: Path) -> float:
            fresh_store(ev, None)
            return timed(exe, ["run", str(ev), "-j", "1"], env)

        measure("run -j 1", "Run", n, trials, exes, run, bare_runs, (big, small))

        kept = {}
        for ev in evs:
            fresh_store(ev, None)
            timed(exes[0], ["run", str(ev), "-j", "1"], env)
            kept[ev] = Path(tmp) / f"{ev.name}-runs"
            shutil.copytree(results(ev), kept[ev], symlinks=True)
        run_dir = one_run_dir(big)

        def grade(exe: str, ev: Path) -> float:
            fresh_store(ev, kept[ev])
            return timed(exe, ["grade", str(ev), "-j", "1"], env)

        measure("grade -j 1, two checker programs", "Grade", n, trials, exes, grade,
                lambda ev, k: bare_grades(ev, k, run_dir), (big, small))
        fsync_figures(Path(tmp), n, trials)


if __name__ == "__main__":
    main()
