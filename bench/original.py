"""`smevals report` side by side with the original smevals (0.2.0) on equivalent stores.

Builds one Eval of N tasks x M models x R samples (default 2,000 x 1 x 5 = 10,000 Runs,
each with one current Grade) twice: in this smevals' store, and in the original's layout
(`<eval>/runs/<task>/<config>/<model>/<UTC time>/run.yaml` with `output.txt`, and the Grade
in `grades/<grader>/grade.yaml` beside a byte copy of the grader as `grader.yaml`). Same
tasks, outcomes, scores, tags and metrics. Then times `report` of each, alternating, warm
(ours with its caches filled; the original keeps no cache, so warm means the page cache).

The original must be installed in a venv of its own, never in this project's:
    python3 -m venv /tmp/orig-venv && /tmp/orig-venv/bin/pip install smevals==0.2.0

Usage: python bench/original.py [--original /tmp/orig-venv/bin/smevals] [--ours CMD] [--tasks 2000]
                                [--models 1] [--repeats 5] [--times 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import SMEVALS, SMOKE, make_eval, write  # noqa: E402
from bench.report import BASE, GRADER, RUNNER, write_grades, write_runs  # noqa: E402

try:
    from yaml import CSafeDumper as Dumper
except ImportError:  # pragma: no cover
    from yaml import SafeDumper as Dumper  # type: ignore[assignment]


def build_original(root: Path, tasks: int, models: int, repeats: int) -> int:
    """The same Eval and results in the original's layout; the number of Runs written."""
    write(root / "eval.yaml", "name: bench\n")
    for i in range(tasks):
        write(root / "tasks" / f"t{i:05d}.yaml", f"name: t{i:05d}\nprompt: task number {i}\n"
              f"expected: {i}\n")
    write(root / "configs" / "default.yaml", "runner: ./r.sh\nmodel: m1\n")
    write(root / "configs" / "r.sh", RUNNER, executable=True)
    grader = "name: default\n" + GRADER
    write(root / "graders" / "default.yaml", grader)
    n = 0
    for t in range(tasks):
        for m in range(models):
            for _sample in range(repeats):
                _one(root, n, f"t{t:05d}", f"model-{m}", grader, t)
                n += 1
    return n


def _one(root: Path, i: int, task: str, model: str, grader: str, number: int) -> None:
    """One Run and its Grade, numbered as bench/report.py numbers them (same outcomes)."""
    started = BASE + timedelta(seconds=i + 1)
    folder = root / "runs" / task / "default" / model / started.strftime("%Y-%m-%dT%H-%M-%SZ")
    run = {"task": {"name": task, "prompt": f"task number {number}", "expected": number},
           "config": {"runner": "./r.sh", "model": model, "name": "default"},
           "started": started.isoformat(), "duration_seconds": 0.1, "exit_code": 0}
    write(folder / "output.txt", "answer\n")
    write(folder / "run.yaml", yaml.dump(run, Dumper=Dumper, sort_keys=False))
    passed = i % 3 != 0
    grade = {"grader": "default", "graded": (started + timedelta(days=1)).isoformat(),
             "outcome": "pass" if passed else "fail", "score": 1.0 if passed else 0.25,
             "tags": ["long"] if i % 7 == 0 else [],
             "checks": [{"checker": "contains", "ok": passed, "metrics": {"latency": i % 13}}]}
    write(folder / "grades" / "default" / "grader.yaml", grader)
    write(folder / "grades" / "default" / "grade.yaml",
          yaml.dump(grade, Dumper=Dumper, sort_keys=False))


def timed(exe: str, args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([exe, *args], cwd=cwd, env={**os.environ, **env},
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{exe} {' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def side_by_side(base: Path, opts: argparse.Namespace) -> None:
    env = {"SMEVALS_CACHE_DIR": str(base / "cache")}
    sides = {"original 0.2.0": (opts.original, base / "orig"), "this smevals": (opts.ours, base)}
    if not os.access(opts.original, os.X_OK):
        print(f"no original smevals at {opts.original}: this smevals alone")
        del sides["original 0.2.0"]
    for exe, cwd in sides.values():
        timed(exe, ["report", "ev"], cwd, env)                # fill caches, warm the disk
    found: dict[str, list[tuple[float, float]]] = {label: [] for label in sides}
    for _ in range(opts.times):
        for label, (exe, cwd) in sides.items():
            found[label].append(timed(exe, ["report", "ev"], cwd, env))
    for label, values in found.items():
        walls, cpus = sorted(v[0] for v in values), sorted(v[1] for v in values)
        print(f"{label}: report, warm, {opts.times} runs: wall median "
              f"{statistics.median(walls):.2f} s ({walls[0]:.2f}-{walls[-1]:.2f}), CPU median "
              f"{statistics.median(cpus):.2f} s ({cpus[0]:.2f}-{cpus[-1]:.2f})")
    if len(found) < 2:
        return
    ratio = statistics.median(v[0] for v in found["original 0.2.0"]) / statistics.median(
        v[0] for v in found["this smevals"])
    print(f"ratio of median wall times: {ratio:.0f}x (load {os.getloadavg()[0]:.1f})")


def run_in(base: Path, opts: argparse.Namespace) -> None:
    if not (base / "ev" / "results").is_dir():
        start = time.perf_counter()
        ev_dir = make_eval(base / "ev", opts.tasks, RUNNER, GRADER)
        write_grades(ev_dir, write_runs(ev_dir, opts.models, opts.repeats), offset=10**6)
        count = build_original(base / "orig" / "ev", opts.tasks, opts.models, opts.repeats)
        print(f"setup: {count} Runs + Grades in each layout, {time.perf_counter() - start:.0f} s")
    side_by_side(base, opts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--original", default="/tmp/orig-venv/bin/smevals",
                        help="the original's `smevals` command (in a venv of its own)")
    parser.add_argument("--ours", default=SMEVALS, help="this smevals' command (default: the "
                        "venv's; an editable install imports more slowly than a regular one)")
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--models", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--times", type=int, default=5)
    parser.add_argument("--keep", metavar="DIR", help="build in DIR and keep it; when DIR "
                        "already holds both stores, only time the commands")
    opts = parser.parse_args()
    if not Path(opts.original).exists() and not SMOKE:
        raise SystemExit(f"no original smevals at {opts.original}; see this script's docstring")
    if opts.keep:
        run_in(Path(opts.keep), opts)
        return
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        run_in(Path(tmp), opts)


if __name__ == "__main__":
    main()
