"""Benchmark the read API's tables (docs/analysis.md) against `report` on one store.

A synthetic store of N Runs, each with one current Grade (bench/report.py's writers:
default 2,000 tasks x 5 models x 10 repeats = 100,000), then, each in a fresh process:

- `report` warm (the index cache filled), and `smevals.runs_df` / `checks_df` warm (the
  call itself, pandas and pyarrow imported, after one run that filled the cache of full
  Run records). Target: runs_df of 100,000 Runs within 2 s warm;
- `smevals export --format parquet` warm (the whole command);
- the store committed to git: `report --rev HEAD` and `runs_df(rev="HEAD")`, first and
  again (the target: as fast as `report --rev`);
- `import smevals` and `smevals --help`, to show the read API costs no start-up.

Wall and CPU time of each process (CPU is the fairer figure on a busy machine). Figures
are printed, never asserted.

Usage: python bench/analysis.py [--tasks 2000] [--models 5] [--repeats 10] [--times 3]
                                [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import SMEVALS, SMOKE, make_eval  # noqa: E402
from bench.report import GRADER, RUNNER, git, write_grades, write_runs  # noqa: E402

# The call itself is timed after pandas and pyarrow are imported (as in a notebook that
# has used them; importing them takes about 0.5 s of CPU on its own).
CALL = """
import sys, time, pandas, pyarrow, smevals
start, cpu = time.perf_counter(), time.process_time()
frame = smevals.{fn}("ev"{rev})
print(f"{{time.perf_counter() - start:.3f}} {{len(frame)}} {{time.process_time() - cpu:.3f}}")
"""


def child(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """(wall, CPU, stdout) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env={**os.environ, **env}, capture_output=True,
                          text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed:\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def show(label: str, runs: list[tuple[float, float, str]], inner: bool = False) -> None:
    walls = sorted(r[0] for r in runs)
    cpus = sorted(r[1] for r in runs)
    text = (f"{label}: wall median {statistics.median(walls):.2f}s (best {walls[0]:.2f}), "
            f"CPU median {statistics.median(cpus):.2f}s")
    if inner:
        calls = sorted(float(r[2].split()[0]) for r in runs)
        inner_cpu = sorted(float(r[2].split()[2]) for r in runs)
        text += f"; the call itself: wall median {statistics.median(calls):.2f}s " \
                f"(best {calls[0]:.2f}), CPU median {statistics.median(inner_cpu):.2f}s " \
                f"(best {inner_cpu[0]:.2f}), {runs[0][2].split()[1]} rows"
    print(f"{text} (load {os.getloadavg()[0]:.1f})", flush=True)


def frame_call(fn: str, rev: str | None = None) -> list[str]:
    return [sys.executable, "-c", CALL.format(fn=fn, rev=f", rev={rev!r}" if rev else "")]


def timings(root: Path, env: dict[str, str], times: int) -> None:
    times = 1 if SMOKE else times
    rounds = range(times)
    child([SMEVALS, "report", "ev"], root, env)                     # fill the caches
    child(frame_call("runs_df"), root, env)
    show("report, warm", [child([SMEVALS, "report", "ev"], root, env) for _ in rounds])
    show("runs_df, warm", [child(frame_call("runs_df"), root, env) for _ in rounds], True)
    show("checks_df, warm", [child(frame_call("checks_df"), root, env) for _ in rounds], True)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as out:
        show("export --format parquet, warm",
             [child([SMEVALS, "export", "ev", "-o", out], root, env) for _ in rounds])
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    report_rev = [SMEVALS, "report", "ev", "--rev", "HEAD"]
    show("report --rev HEAD, first", [child(report_rev, root, env)])
    show("runs_df(rev='HEAD'), first", [child(frame_call("runs_df", "HEAD"), root, env)], True)
    show("report --rev HEAD, again", [child(report_rev, root, env) for _ in rounds])
    show("runs_df(rev='HEAD'), again",
         [child(frame_call("runs_df", "HEAD"), root, env) for _ in rounds], True)
    show("python -c 'import smevals'",
         [child([sys.executable, "-c", "import smevals"], root, env) for _ in rounds])
    show("smevals --help", [child([SMEVALS, "--help"], root, env) for _ in rounds])


def build(root: Path, opts: argparse.Namespace) -> None:
    ev_dir = make_eval(root / "ev", opts.tasks, RUNNER, GRADER)
    start = time.perf_counter()
    runs = write_runs(ev_dir, opts.models, opts.repeats)
    write_grades(ev_dir, runs, offset=len(runs) + 10)
    print(f"setup: {len(runs)} Runs and {len(runs)} Grades written in "
          f"{time.perf_counter() - start:.1f}s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--times", type=int, default=3, help="runs of each warm timing")
    parser.add_argument("--keep", metavar="DIR", help="build in DIR (a store already built "
                        "there is reused, its git history made again)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        base = Path(opts.keep) if opts.keep else Path(tmp)
        root = base / "repo"
        env = {"SMEVALS_CACHE_DIR": str(base / "cache")}
        if not (root / "ev").is_dir():
            root.mkdir(parents=True, exist_ok=True)
            build(root, opts)
        shutil.rmtree(root / ".git", ignore_errors=True)
        timings(root, env, opts.times)


if __name__ == "__main__":
    main()
