"""smevals' own cost per Run and per Grade, against bare execs of the same programs, and
where it goes, phase by phase.

For N Runs of a one-line shell runner at `-j 1`: the time of `smevals run` making N Runs
and making one (the difference is N-1 Runs without the start-up), against N-1 bare execs of
the runner (spawned as smevals spawns it: fork/exec of the script, its own session, stdin
closed, stdout and stderr read through pipes, the same environment variables); the
difference per Run is smevals' own cost. The same for N Grades by a grader of two checker
programs (`grade -j 1`) against 2(N-1) bare execs of those programs. Each is given as wall
time and as CPU time (user + system, the command's and its children's; for the bare execs
the benchmark's own and the children's): on a machine whose cores are shared with other
work the wall time means little, the CPU time still does.

The machine may be shared: each figure is the minimum of several trials (`--trials`), the
spread printed beside it, and the load average at the end. Every trial writes into a fresh
store (`SMEVALS_STORE`), and no store is removed before the end. Then each command runs once
more with `SMEVALS_PHASES` (smevals/phases.py) and the table of where its own time went is
printed: per phase, its wall and CPU time per Run (or Grade), each phase's time less the
phases inside it; "start-up" is the CPU used before the command began (Python, the
imports), "unmarked" the command's CPU in no phase (the other threads, the main thread's
waiting loop, printing).

`--against OTHER_SMEVALS` times another installation's `smevals` executable too (say
a venv of the previous commit), alternating with this one trial by trial, so that both
see the same load: the before/after table of docs/performance.md. Each installation keeps
its own cache folder (the definitions cache is keyed by the code that reads them).

Usage: python bench/overhead.py [-n N] [--trials T] [--smoke] [--against PATH] [--ours PATH]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
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

Clock = tuple[float, float]             # (wall, CPU) seconds


def cpu_now() -> float:
    """CPU seconds used so far by this process and its waited-for children."""
    me, kids = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                    resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def bare(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    """One exec of `argv` the way smevals starts a child (without smevals around it)."""
    subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                   start_new_session=True, check=False)


def clocked(fn: Callable[[], object]) -> Clock:
    wall, cpu = time.perf_counter(), cpu_now()
    fn()
    return time.perf_counter() - wall, cpu_now() - cpu


def bare_runs(ev: Path, n: int) -> Clock:
    env = {**os.environ, "SMEVALS_MODEL": "m1", "SMEVALS_PROMPT": "task number 1"}
    script = str(ev / "configs" / "r.sh")
    return clocked(lambda: execs([script] * n, ev, env))


def bare_grades(ev: Path, n: int, run_dir: Path) -> Clock:
    env = {**os.environ, "SMEVALS_RUN_DIR": str(run_dir), "SMEVALS_MODEL": "m1"}
    scripts = [str(ev / "graders" / "a.sh"), str(ev / "graders" / "b.sh")]
    return clocked(lambda: execs(scripts * n, ev, env))


def execs(scripts: list[str], cwd: Path, env: dict[str, str]) -> None:
    for script in scripts:
        bare([script], cwd, env)


def spread(values: list[float], unit: str = "s", scale: float = 1.0) -> str:
    low, high = min(values) * scale, max(values) * scale
    return f"{low:.2f} {unit} (trials {low:.2f}-{high:.2f})"


_STORES: dict[Path, Path] = {}      # Eval -> the store folder of its newest command
_COUNT = itertools.count()


def results(ev: Path) -> Path:
    """The Eval's store in the folder its newest command was given (SMEVALS_STORE)."""
    return _STORES[ev] / "bench"


def fresh_store(ev: Path, base: Path | None, env: dict[str, str]) -> dict[str, str]:
    """`env` pointing the Eval's next command at a new store folder, `base` copied in. The
    last one is left where it is until the end: on a file system that makes new files
    dearer after removals (docs/performance.md, "Why creating files slows down"), removing
    it would slow the command timed next."""
    _STORES[ev] = ev.parent / "stores" / str(next(_COUNT))
    if base is not None:
        shutil.copytree(base, results(ev), symlinks=True)
    return {**env, "SMEVALS_STORE": str(_STORES[ev])}


def one_run_dir(ev: Path) -> Path:
    return next(p.parent for p in results(ev).rglob("run.json"))


def timed(exe: str, args: list[str], env: dict[str, str]) -> Clock:
    """(wall, CPU) of one command: CPU of the command and every child it waited for."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([exe, *args], capture_output=True, text=True,
                          env={**os.environ, **env})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{exe} {' '.join(args)} failed:\n{proc.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(label: str, unit: str, n: int, trials: int, exes: list[str],
            command: Callable[[str, Path], Clock], base: Callable[[Path, int], Clock],
            evs: tuple[Path, Path]) -> None:
    """Time `command` with each executable on the N-item Eval and on the 1-item one
    (`trials` times each, alternating), and `base` (the bare execs) for N-1; each
    difference's minimum over the trials counts."""
    big, small = evs
    own: dict[str, list[Clock]] = {exe: [] for exe in exes}
    bares: list[Clock] = []
    for _ in range(trials):
        for exe in exes:
            one, many = command(exe, small), command(exe, big)
            own[exe].append((many[0] - one[0], many[1] - one[1]))
        bares.append(base(big, n - 1))
    per = 1000 / (n - 1)
    execs = f"{n - 1} bare execs{' (x2)' if unit == 'Grade' else ''}"
    print(f"{label}: {execs}: wall {spread([b[0] for b in bares])}, "
          f"CPU {spread([b[1] for b in bares])}")
    wall0, cpu0 = min(b[0] for b in bares), min(b[1] for b in bares)
    for exe in exes:
        walls, cpus = [c[0] for c in own[exe]], [c[1] for c in own[exe]]
        print(f"  {exe}: {n - 1} {unit}s past the first: wall {spread(walls)}, "
              f"CPU {spread(cpus)}")
        print(f"    smevals' own cost per {unit}: wall {(min(walls) - wall0) * per:.2f} ms, "
              f"CPU {(min(cpus) - cpu0) * per:.2f} ms")


def phases(exe: str, args: list[str], env: dict[str, str], n: int, unit: str,
           folder: Path) -> None:
    """Run the command once with SMEVALS_PHASES and print where its own time went."""
    out = folder / f"phases-{unit}.jsonl"
    out.unlink(missing_ok=True)
    timed(exe, args, {**env, "SMEVALS_PHASES": str(out)})
    lines = [json.loads(line) for line in out.read_text().splitlines()] \
        if out.exists() else []
    found = next((d for d in lines if d.get("phases")), None)
    if found is None:
        print(f"  ({exe} does not mark its phases)")
        return
    print(f"  where the time of `{' '.join(args[:1])}` went, per {unit} ({n} {unit}s), "
          "wall / CPU ms (each phase less those inside it):")
    table = sorted(found["phases"].items(), key=lambda kv: -kv[1][2])
    marked = sum(cpu for _count, _wall, cpu in found["phases"].values())
    rest = found["cpu"] - found["startup_cpu"] - marked
    for name, (count, wall, cpu) in table:
        print(f"    {name:32s} {count:6d}x  {wall / n * 1000:7.2f} / {cpu / n * 1000:6.2f}")
    print(f"    {'unmarked (other threads, waiting)':32s} {'':7s}  {'':7s}   "
          f"{rest / n * 1000:6.2f}")
    print(f"    {'start-up (once)':32s} {'':7s}  {'':7s}   {found['startup_cpu'] * 1000:6.1f}"
          f" ms; children (the programs): {found['children_cpu'] / n * 1000:.2f} ms per {unit}")


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
            times[way].append(time.perf_counter() - start)      # removed at the end only
    print(f"making {n} objects durable (write, fsync, rename, parent fsync):")
    for way, values in times.items():
        print(f"  {way}: {min(values) / n * 1000:.2f} ms per object "
              f"(trials {min(values) / n * 1000:.2f}-{max(values) / n * 1000:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="Runs and Grades (default 200)")
    parser.add_argument("--trials", type=int, default=5, help="trials, minimum kept (5)")
    parser.add_argument("--smoke", action="store_true", help="20 Runs, 2 trials")
    parser.add_argument("--ours", default=_common.SMEVALS, help="this `smevals` (the venv's)")
    parser.add_argument("--against", metavar="PATH", help="another `smevals` to time too")
    args = parser.parse_args()
    exes = [args.ours, *([args.against] if args.against else [])]
    n, trials = (20, min(args.trials, 2)) if args.smoke else (max(2, args.n), args.trials)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        caches = {exe: {"SMEVALS_CACHE_DIR": str(Path(tmp) / f"cache{i}")}
                  for i, exe in enumerate(exes)}
        evs = tuple(make_eval(Path(tmp) / name, size, RUNNER, GRADER)
                    for name, size in (("big", n), ("small", 1)))
        for ev in evs:
            write(ev / "graders" / "a.sh", CHECK_A, executable=True)
            write(ev / "graders" / "b.sh", CHECK_B, executable=True)
        big, small = evs[0], evs[1]

        def run(exe: str, ev: Path) -> Clock:
            return timed(exe, ["run", str(ev), "-j", "1"], fresh_store(ev, None, caches[exe]))

        measure("run -j 1", "Run", n, trials, exes, run, bare_runs, (big, small))
        phases(exes[0], ["run", str(big), "-j", "1"], fresh_store(big, None, caches[exes[0]]),
               n, "Run", Path(tmp))

        kept = {}
        for ev in evs:
            timed(exes[0], ["run", str(ev), "-j", "1"], fresh_store(ev, None, caches[exes[0]]))
            kept[ev] = Path(tmp) / f"{ev.name}-runs"
            shutil.copytree(results(ev), kept[ev], symlinks=True)
        run_dir = one_run_dir(big)

        def grade(exe: str, ev: Path) -> Clock:
            return timed(exe, ["grade", str(ev), "-j", "1"],
                         fresh_store(ev, kept[ev], caches[exe]))

        measure("grade -j 1, two checker programs", "Grade", n, trials, exes, grade,
                lambda ev, k: bare_grades(ev, k, run_dir), (big, small))
        phases(exes[0], ["grade", str(big), "-j", "1"],
               fresh_store(big, kept[big], caches[exes[0]]), n, "Grade", Path(tmp))
        fsync_figures(Path(tmp), n, trials)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
