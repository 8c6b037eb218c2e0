"""Benchmark `smevals report` and `smevals diff` on large synthetic stores.

(1) report: a store of N Runs, each with one current Grade (default 2,000 tasks x 5 models
    x 10 repeats = 100,000), timed cold (no cache) and warm (the index cache filled), in
    Markdown and in JSON. Target: warm, within 2 s.
(2) diff: the same store committed to git, then the grader edited and every Run regraded
    (100,000 new Grades, a tenth of them flipped) and committed again; `diff HEAD~1 HEAD`
    reads 100,000 Runs and 100,000 / 200,000 Grades per side out of git. Target: 20 s.
    Timed three ways: first after the commits (the working tree's index, left by the
    report, holds the older records), again (both revisions cached), and with no cache
    at all (as on a fresh CI machine).

Records are written straight to their folders (canonical JSON, real ids), far faster than
`Staging`, which fsyncs every file. Figures are printed, never asserted.

Usage: python bench/report.py [--tasks 2000] [--models 5] [--repeats 10] [--no-diff]
                              [--checks 1] [--profile]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import SMOKE, make_eval, timed, write  # noqa: E402
from smevals.evaldef.load import load_eval  # noqa: E402
from smevals.files.canonical import dumps, sha256_bytes  # noqa: E402
from smevals.grade.version import grader_version, grading_hash  # noqa: E402
from smevals.run.plan import inputs_of, resolve_runner  # noqa: E402
from smevals.store.layout import object_id, timestamp  # noqa: E402

RUNNER = '#!/bin/sh\necho "answer: $SMEVALS_TASK_EXPECTED"\n'
GRADER = "checks:\n  - checker: contains\n    value: answer\n"
GRADER_V2 = "checks:\n  - checker: contains\n    name: answered\n    value: answer\n"
BASE = datetime(2026, 1, 1, tzinfo=UTC)


def put(
    folder: Path, name: str, record: dict[str, Any], stamp: datetime, extra: dict[str, bytes]
) -> tuple[str, str]:
    files = [{"path": fname, "sha256": sha256_bytes(content), "size": len(content)}
             for fname, content in sorted(extra.items())]
    data = dumps({**record, "format": 1, "files": files})
    oid = object_id(timestamp(stamp), sha256_bytes(data))
    target = folder / oid
    target.mkdir(parents=True)
    (target / name).write_bytes(data)
    for fname, content in extra.items():
        (target / fname).write_bytes(content)
    return oid, f"{folder.name}/{oid}"


def write_runs(ev_dir: Path, models: int, repeats: int
               ) -> list[tuple[str, str, dict[str, Any]]]:
    ev = load_eval(ev_dir)
    config = ev.configs["default"]
    runner = resolve_runner(config)
    store = ev_dir / "results"
    out, n = [], 0
    for task in ev.tasks:
        for m in range(models):
            model = f"model-{m}"
            inputs = inputs_of(task, config, runner, model)
            folder = store / "runs" / task.name / "default" / model
            for sample in range(repeats):
                n += 1
                started = BASE + timedelta(seconds=n)
                rec = {
                    "kind": "run",
                    "eval": "bench",
                    "task": task.doc,
                    "grading": {},
                    "config": {"name": "default", "runner": "./r.sh", "model": model},
                    "model": model,
                    "inputs": inputs,
                    "sample": sample,
                    "started": started.isoformat(),
                    "ended": started.isoformat(),
                    "duration_seconds": 0.1,
                    "exit_code": 0,
                    "status": "ok",
                    "failure": None,
                    "usage": None,
                }
                oid, _ = put(folder, "run.json", rec, started, {"output.txt": b"answer\n"})
                rel = f"runs/{task.name}/default/{model}/{oid}"
                out.append((oid, rel, rec))
    return out


def extra_checks(count: int, i: int, passed: bool) -> list[dict[str, Any]]:
    """`count` more Checks per Grade (named, one in two scoring), for --checks."""
    return [{"checker": "regex", "name": f"extra-{k}", "ok": passed or k % 2 == 0,
             **({"score": (i % 10) / 10} if k % 2 else {}),
             **({} if passed or k % 2 == 0 else {"notes": "no match"})}
            for k in range(1, count + 1)]


def write_grades(
    ev_dir: Path, runs: list[tuple[str, str, dict[str, Any]]], offset: int, flip_every: int = 0,
    checks: int = 1,
) -> None:
    ev = load_eval(ev_dir)
    version = grader_version(ev.graders["default"])
    ghash = grading_hash({})
    for i, (oid, rel, rec) in enumerate(runs):
        task, model = rec["task"]["name"], rec["model"]
        passed = (i % 3 != 0) != bool(flip_every and i % flip_every == 0)
        graded = BASE + timedelta(seconds=offset + i)
        grade = {
            "kind": "grade",
            "eval": "bench",
            "run": {"id": oid, "rel": rel, "task": task, "config": "default", "model": model},
            "grader": {"name": "default", "version": version, "file": "grader.yaml"},
            "grading_hash": ghash,
            "graded": graded.isoformat(),
            "outcome": "pass" if passed else "fail",
            "score": 1.0 if passed else 0.25,
            "tags": ["long"] if i % 7 == 0 else [],
            "metrics": {"latency": i % 13},
            "checks": [{"checker": "contains", "ok": passed},
                       *extra_checks(checks - 1, i, passed)],
        }
        folder = ev_dir / "results" / "grades" / "default" / task / "default" / model
        put(folder, "grade.json", grade, graded, {"grader.yaml": GRADER.encode()})


def git(repo: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@example.com",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@example.com",
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, stdout=subprocess.DEVNULL)


def profile(args: list[str], cwd: Path) -> None:
    """Run one command in this process under cProfile and print where the time goes."""
    from smevals.cli import main

    here = os.getcwd()
    os.chdir(cwd)
    prof = cProfile.Profile()
    stdout = sys.stdout
    try:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        prof.enable()
        with contextlib.suppress(SystemExit):
            main(args)
        prof.disable()
    finally:
        sys.stdout.close()
        sys.stdout = stdout
        os.chdir(here)
    print(f"--- profile of smevals {' '.join(args)} (cumulative, top 25)")
    pstats.Stats(prof).sort_stats(os.environ.get("BENCH_SORT", "cumulative")).print_stats(25)


def clocked(label: str, args: list[str], env: dict[str, str], cwd: Path) -> float:
    """Wall time, and the CPU time of smevals and its git children (a fairer figure on a
    busy machine: other processes inflate wall time, not CPU time)."""
    here = os.getcwd()
    os.chdir(cwd)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        wall = timed(args, env)
    finally:
        os.chdir(here)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"{label}: {wall:.2f}s wall, {cpu:.2f}s CPU (load {os.getloadavg()[0]:.1f})")
    return wall


def repeated(label: str, args: list[str], env: dict[str, str], cwd: Path,
             times: int = 7) -> None:
    """The command `times` times: best, median and worst wall time (the VM is noisy)."""
    times = 1 if SMOKE else times
    here = os.getcwd()
    os.chdir(cwd)
    try:
        walls = sorted(timed(args, env) for _ in range(times))
    finally:
        os.chdir(here)
    print(f"{label}, {times} runs: best {walls[0]:.2f}s, median {walls[times // 2]:.2f}s, "
          f"worst {walls[-1]:.2f}s (load {os.getloadavg()[0]:.1f})")


def bench_report(root: Path, opts: argparse.Namespace, env: dict[str, str]) -> list[Any]:
    ev_dir = make_eval(root / "ev", opts.tasks, RUNNER, GRADER)
    start = time.perf_counter()
    runs = write_runs(ev_dir, opts.models, opts.repeats)
    write_grades(ev_dir, runs, offset=len(runs) + 10, checks=opts.checks)
    print(
        f"setup: {len(runs)} Runs and {len(runs)} Grades written in "
        f"{time.perf_counter() - start:.1f}s"
    )
    clocked("report (markdown), cold cache", ["report", "ev"], env, root)
    repeated("report (markdown), warm cache", ["report", "ev"], env, root)
    clocked("report --by-task, warm cache", ["report", "ev", "--by-task"], env, root)
    clocked("report --format json, warm cache", ["report", "ev", "--format", "json"], env, root)
    if opts.profile:
        os.environ.update(env)
        profile(["report", "ev"], root)
    return runs


def bench_diff(root: Path, runs: list[Any], opts: argparse.Namespace, env: dict[str, str]) -> None:
    ev_dir = root / "ev"
    start = time.perf_counter()
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    write(ev_dir / "graders" / "default.yaml", GRADER_V2)
    write_grades(ev_dir, runs, offset=3 * len(runs), flip_every=10, checks=opts.checks)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "two")
    print(f"setup: git history of two commits made in {time.perf_counter() - start:.1f}s")
    clocked("diff HEAD~1 HEAD, first (working-tree index only)",
            ["diff", "HEAD~1", "HEAD", "ev"], env, root)
    clocked("diff HEAD~1 HEAD --format json, again (revisions cached)",
            ["diff", "HEAD~1", "HEAD", "ev", "--format", "json"], env, root)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as empty:
        clocked("diff HEAD~1 HEAD, no cache at all", ["diff", "HEAD~1", "HEAD", "ev"],
                {"SMEVALS_CACHE_DIR": empty}, root)
    clocked("report --rev HEAD~1", ["report", "ev", "--rev", "HEAD~1"], env, root)
    if opts.profile:
        profile(["diff", "HEAD~1", "HEAD", "ev"], root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--checks", type=int, default=1,
                        help="Checks per Grade (the per-Check figures' cost)")
    parser.add_argument("--no-diff", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--keep", metavar="DIR", help="Build in DIR and keep it; when DIR "
                        "already holds a built store, only time the commands.")
    opts = parser.parse_args()
    if opts.keep:
        run_in(Path(opts.keep), opts)
        return
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        run_in(Path(tmp), opts)


def run_in(base: Path, opts: argparse.Namespace) -> None:
    root = base / "repo"
    env = {"SMEVALS_CACHE_DIR": str(base / "cache")}
    if (root / "ev" / "results").is_dir():     # built before: time the commands again
        history = (root / ".git").is_dir()      # not when it was built with --no-diff
        for label, args in TIMED:
            if history or not _reads_git(args):
                clocked(label, args, env, root)
        if opts.profile:
            os.environ.update(env)
            for _label, args in TIMED[1:2] + TIMED[-3:-2]:
                if history or not _reads_git(args):
                    profile(args, root)
        return
    if root.exists():
        sys.exit(f"{root} holds no built store (a build stopped half-way?): remove it, or "
                 "give another --keep")
    root.mkdir(parents=True)
    runs = bench_report(root, opts, env)
    if not opts.no_diff:
        bench_diff(root, runs, opts, env)


def _reads_git(args: list[str]) -> bool:
    return args[0] == "diff" or "--rev" in args


TIMED = [("report (markdown), cold or warm cache", ["report", "ev"]),
         ("report (markdown), warm cache", ["report", "ev"]),
         ("report --format json, warm cache", ["report", "ev", "--format", "json"]),
         ("diff HEAD~1 HEAD (markdown)", ["diff", "HEAD~1", "HEAD", "ev"]),
         ("diff HEAD~1 HEAD --format json", ["diff", "HEAD~1", "HEAD", "ev", "--format", "json"]),
         ("report --rev HEAD~1", ["report", "ev", "--rev", "HEAD~1"])]


if __name__ == "__main__":
    main()
