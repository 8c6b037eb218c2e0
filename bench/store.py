"""Benchmark the results store: write, list and load, verify, read at a git revision.

Builds a synthetic store of N Runs and N Grades (every object through `Staging`, fsync
included, in --jobs worker processes) in a temporary folder, then times, each in a fresh
process: loading every record cold (no index cache) and warm (cached), `verify_store`, and
loading every record at a git revision (the store committed in a temporary repository).

Warm loads are timed with records in full and in the brief view that reports read
(store/brief.py); set against the cold loads, they show what the cache and the brief view
each earn. `--reuse DIR` times the loads again on a store kept with
`--keep` (for before/after figures on the same objects).

Usage: python bench/store.py [--runs 100000] [--grades 100000] [--jobs 2] [--no-fsync]
                             [--dir /tmp] [--keep] [--reuse DIR] [--no-git]
                             [--profile warm|cold|verify|git]

Targets on a 2-core machine (100k + 100k): warm load <= 1 s, cold <= 15 s,
verify >= 2,000 objects/s, load at a git revision <= 20 s.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

TASKS, CONFIGS, MODELS = 500, 2, 5
BASE = 1_780_000_000  # 2026-05-28, the synthetic Runs' start times

PROBE = r"""
import json, sys, time
from pathlib import Path
from smevals.store.read import Store
root, rev, what = Path(sys.argv[1]), sys.argv[2] or None, sys.argv[3]
if what == "verify":
    from smevals.store.verify import verify_store
    start = time.perf_counter()
    count, problems = verify_store(root, rev)
    print(json.dumps({"seconds": time.perf_counter() - start, "objects": count,
                      "problems": len(problems)}))
else:
    start = time.perf_counter()
    store = Store(root, rev)
    brief = what == "brief"
    runs, grades = store.runs(brief=brief), store.grades(brief=brief)
    seconds = time.perf_counter() - start
    assert all(isinstance(o.record, dict) for o in runs + grades)
    print(json.dumps({"seconds": seconds, "objects": len(runs) + len(grades),
                      "broken": len(store.broken)}))
"""


def iso(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + ".123456Z"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def names(i: int) -> tuple[str, str, str]:
    return (
        f"task-{i % TASKS:04d}",
        f"config-{(i // TASKS) % CONFIGS}",
        f"model-{(i // (TASKS * CONFIGS)) % MODELS}",
    )


def run_record(i: int) -> dict[str, Any]:
    task, config, model = names(i)
    return {
        "eval": "bench",
        "task": {"name": task, "prompt": f"Write a haiku about item {i}."},
        "grading": {"expected": f"answer {i % 97}"},
        "config": {
            "name": config,
            "runner": "./runner.sh",
            "model": model,
            "params": {"temperature": 0.2, "max_tokens": 256},
        },
        "model": model,
        "sample": i // (TASKS * CONFIGS * MODELS),
        "inputs": {
            "hash": digest(f"in{i % 5000}"),
            "task": digest(task),
            "config": digest(config),
            "runner": digest("runner"),
        },
        "started": iso(BASE + i),
        "ended": iso(BASE + i + 2),
        "duration_seconds": 1.234,
        "exit_code": 0,
        "status": "ok",
        "failure": None,
        "text": {"output_bytes_replaced": 0, "stderr_bytes_replaced": 0},
        "usage": {"input_tokens": 12 + i % 7, "output_tokens": 30 + i % 11},
        "provenance": {
            "smevals": "0.1.0",
            "python": "3.11.7",
            "platform": "linux-x86_64",
            "git": {"commit": digest("head")[:40], "dirty": False},
        },
    }


def grade_record(i: int, run_id: str, run_rel: str) -> dict[str, Any]:
    task, config, model = names(i)
    ok = i % 3 != 0
    checks = [
        {
            "checker": "contains",
            "name": "mentions",
            "ok": True,
            "score": 1.0,
            "metrics": {},
            "tags": [],
            "notes": "",
            "details": {"needle": "moon"},
        },
        {
            "checker": "regex",
            "ok": ok,
            "score": 1.0 if ok else 0.0,
            "metrics": {"lines": 3},
            "tags": ["short"],
            "notes": "3 lines",
            "details": {},
        },
    ]
    return {
        "eval": "bench",
        "run": {"id": run_id, "rel": run_rel, "task": task, "config": config, "model": model},
        "grader": {"name": "default", "version": digest("grader-v1"), "file": "grader.yaml"},
        "grading_hash": digest(f"grading{i % 97}"),
        "method": "all",
        "graded": iso(BASE + 10_000_000 + i),
        "duration_seconds": 0.012,
        "outcome": "pass" if ok else "fail",
        "score": 1.0 if ok else 0.0,
        "tags": ["short"],
        "metrics": {"lines": 3},
        "checks": checks,
        "smevals": "0.1.0",
    }


def write_slice(
    root: str, kind: str, first: int, count: int, fsync: bool, runs: list[tuple[str, str]]
) -> tuple[list[tuple[str, str]], float]:
    """Write objects first..first+count through Staging; ([(id, rel)], seconds)."""
    from smevals.store.read import Store

    if not fsync:
        os.fsync = lambda fd: None  # bench only
    store = Store(Path(root))
    out = []
    start = time.perf_counter()
    for i in range(first, first + count):
        staging = store.stage(kind)
        task, config, model = names(i)
        if kind == "run":
            (staging.dir / "output.txt").write_text(f"moon over item {i}\n" * 8)
            written = staging.commit(run_record(i), [task, config, model])
        else:
            (staging.dir / "grader.yaml").write_text("checks:\n  - checker: contains\n" * 6)
            run_id, run_rel = runs[i - first]
            written = staging.commit(
                grade_record(i, run_id, run_rel), ["default", task, config, model]
            )
        out.append((written.id, written.rel))
    return out, time.perf_counter() - start


def build(
    root: Path, kind: str, total: int, jobs: int, fsync: bool, runs: list[tuple[str, str]]
) -> tuple[list[tuple[str, str]], float, float]:
    """([(id, rel)], wall seconds, objects per second per process)."""
    size = -(-total // jobs)
    start = time.perf_counter()
    with ProcessPoolExecutor(jobs) as pool:
        futures = [
            pool.submit(
                write_slice,
                str(root),
                kind,
                first,
                min(size, total - first),
                fsync,
                runs[first : first + size] if runs else [],
            )
            for first in range(0, total, size)
        ]
        results = [f.result() for f in futures]
    wall = time.perf_counter() - start
    per_process = sum(len(ids) / secs for ids, secs in results) / len(results)
    return [pair for ids, _s in results for pair in ids], wall, per_process


def probe(root: Path, what: str, env: dict[str, str], rev: str = "",
          profile: str | None = None) -> dict[str, Any]:
    script = root.parent.parent / "probe.py"
    script.write_text(PROBE)
    args = [sys.executable, str(script), str(root), rev, what]
    if profile == what or (profile == "git" and rev and what == "git"):
        out = Path(tempfile.gettempdir()) / f"store-{what}.prof"
        args[1:1] = ["-m", "cProfile", "-o", str(out)]
        print(f"  (profile written to {out}; read it with python -m pstats)")
    proc = subprocess.run(args, capture_output=True, text=True, env={**os.environ, **env})
    if proc.returncode != 0:
        raise SystemExit(f"probe {what} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def drop_page_cache() -> bool:
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        return False
    return True


def git(repo: Path, *args: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed:\n{proc.stderr}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--grades", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--dir", default=os.environ.get("BENCH_DIR"))
    parser.add_argument("--no-fsync", action="store_true", help="build without fsync")
    parser.add_argument("--no-git", action="store_true")
    parser.add_argument("--keep", action="store_true", help="keep the store afterwards")
    parser.add_argument("--reuse", metavar="DIR", help="time the loads of a store kept before")
    parser.add_argument("--profile", choices=["warm", "cold", "verify", "git"])
    opts = parser.parse_args()
    if opts.reuse:
        reuse(Path(opts.reuse), opts)
        return
    tmp = Path(tempfile.mkdtemp(prefix="smevals-bench-", dir=opts.dir))
    try:
        run_all(tmp, opts)
    finally:
        if opts.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def run_all(tmp: Path, opts: argparse.Namespace) -> None:
    root = tmp / "repo" / "results"
    env = {"SMEVALS_CACHE_DIR": str(tmp / "cache")}
    total = opts.runs + opts.grades
    print(f"store: {root} ({opts.runs} Runs + {opts.grades} Grades, {os.cpu_count()} CPUs)")
    runs, wall_r, rate_r = build(root, "run", opts.runs, opts.jobs, not opts.no_fsync, [])
    pairs = [runs[i % len(runs)] for i in range(opts.grades)] if runs else []
    _g, wall_g, rate_g = build(root, "grade", opts.grades, opts.jobs, not opts.no_fsync, pairs)
    fsync = "no fsync" if opts.no_fsync else "fsync on"
    print(
        f"write through Staging ({fsync}, {opts.jobs} processes): "
        f"{total / (wall_r + wall_g):,.0f} objects/s overall, "
        f"{(rate_r + rate_g) / 2:,.0f} objects/s per process ({wall_r + wall_g:.0f} s)"
    )
    report_loads(root, env, opts.profile, total)
    report_verify(root, env, opts.profile)
    if not opts.no_git:
        report_git(tmp / "repo", root, env, opts.profile)


def reuse(tmp: Path, opts: argparse.Namespace) -> None:
    """Time the loads again on a store kept with --keep, with a fresh index cache."""
    root = tmp / "repo" / "results"
    env = {"SMEVALS_CACHE_DIR": str(tmp / "cache")}
    report_loads(root, env, opts.profile, opts.runs + opts.grades)
    if (tmp / "repo" / ".git").is_dir() and not opts.no_git:
        shutil.rmtree(env["SMEVALS_CACHE_DIR"], ignore_errors=True)
        result = probe(root, "git", env, rev="HEAD", profile=opts.profile)
        print(f"list + load every record at HEAD (no cache): {result['seconds']:.2f} s")


def report_loads(root: Path, env: dict[str, str], profile: str | None, total: int) -> None:
    shutil.rmtree(env["SMEVALS_CACHE_DIR"], ignore_errors=True)
    dropped = drop_page_cache()
    cold = probe(root, "cold", env, profile=profile)
    note = "page cache dropped" if dropped else "page cache warm (could not drop it)"
    print(
        f"list + load every record, cold (no index cache, {note}): {cold['seconds']:.2f} s"
        f" for {cold['objects']:,} records"
    )
    shutil.rmtree(env["SMEVALS_CACHE_DIR"], ignore_errors=True)
    cold2 = probe(root, "cold", env)
    print(
        f"list + load every record, cold (no index cache, page cache warm): "
        f"{cold2['seconds']:.2f} s"
    )
    warm = [
        probe(root, "warm", env, profile=profile if i == 0 else None)["seconds"] for i in range(3)
    ]
    print(
        f"list + load every record, warm (index cache): best {min(warm):.2f} s, "
        f"runs {', '.join(f'{w:.2f}' for w in warm)}"
    )
    brief = [probe(root, "brief", env)["seconds"] for _ in range(3)]
    print(f"list + load every record in the brief view, warm: best {min(brief):.2f} s, "
          f"runs {', '.join(f'{w:.2f}' for w in brief)}")
    assert cold["objects"] == total, cold


def report_verify(root: Path, env: dict[str, str], profile: str | None) -> None:
    result = probe(root, "verify", env, profile=profile)
    print(
        f"verify: {result['objects'] / result['seconds']:,.0f} objects/s "
        f"({result['objects']:,} objects in {result['seconds']:.1f} s, "
        f"{result['problems']} problems)"
    )


def report_git(repo: Path, root: Path, env: dict[str, str], profile: str | None) -> None:
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "bench@example.com")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "gc.auto", "0")
    added = git(repo, "add", "-A")
    committed = git(repo, "commit", "-q", "-m", "store")
    print(f"git add {added:.0f} s, commit {committed:.0f} s (setup, not timed below)")
    loose = probe(root, "git", env, rev="HEAD", profile=profile)
    print(
        f"list + load every record at HEAD (loose objects): {loose['seconds']:.2f} s "
        f"for {loose['objects']:,} records"
    )
    packed = git(repo, "gc", "-q")
    result = probe(root, "git", env, rev="HEAD")
    print(
        f"list + load every record at HEAD (after git gc, {packed:.0f} s): "
        f"{result['seconds']:.2f} s"
    )
    check = probe(root, "verify", env, rev="HEAD")
    print(
        f"verify --rev HEAD: {check['objects'] / check['seconds']:,.0f} objects/s "
        f"({check['seconds']:.1f} s, {check['problems']} problems)"
    )


if __name__ == "__main__":
    main()
