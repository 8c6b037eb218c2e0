"""Benchmark an Eval whose Tasks are the rows of one JSONL file (issue 29: ≤ 0.3 s warm for
10,000 rows).

Prints, cold (no definitions cache: every row parsed and schema-checked) and warm (the
file taken from the cache of evaldef/defcache.py), the median of --repeats:
  - load: `read_eval` alone, in a fresh process (imports not counted);
  - `smevals validate` and `smevals run --dry-run`: the whole command in a fresh process,
    wall time and CPU time (user + system; the CPU figure is the one to read on a busy
    machine, where wall time mostly measures waiting for a core).

Usage: python bench/datafiles.py [--rows 10000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
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

from bench._common import SMEVALS, write  # noqa: E402

LOAD = r"""
import sys, time
from pathlib import Path
from smevals.evaldef.load import read_eval
start = time.perf_counter()
ev, problems = read_eval(Path(sys.argv[1]))
took = time.perf_counter() - start
assert not problems, problems
print(took, len(ev.tasks))
"""


def make_jsonl_eval(root: Path, rows: int) -> Path:
    write(root / "eval.yaml", "name: rows\n")
    write(root / "configs" / "default.yaml", "runner: ./r.sh\nmodel: m1\n")
    write(root / "configs" / "r.sh", '#!/bin/sh\necho "$SMEVALS_PROMPT"\n', executable=True)
    write(root / "graders" / "default.yaml",
          "checks:\n  - checker: contains\n    value: {task: expected}\n")
    lines = (json.dumps({"name": f"q{i:05d}", "prompt": f"What is {i} + {i}? Answer with the "
                         "number only.", "topic": "arithmetic", "level": i % 5,
                         "grading": {"expected": str(2 * i)}}) for i in range(rows))
    write(root / "tasks" / "questions.jsonl", "".join(line + "\n" for line in lines))
    return root


def load_once(ev: Path, env: dict[str, str]) -> float:
    proc = subprocess.run([sys.executable, "-c", LOAD, str(ev)], env=env, capture_output=True,
                          text=True, check=True)
    return float(proc.stdout.split()[0])


def command_once(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one `smevals args` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([SMEVALS, *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"smevals {' '.join(args)} failed:\n{proc.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(ev: Path, cache: Path, warm: bool, repeats: int) -> dict[str, list[float]]:
    env = {**os.environ, "SMEVALS_CACHE_DIR": str(cache)}
    out: dict[str, list[float]] = {"load": [], "validate": [], "validate cpu": [],
                                   "dry-run": [], "dry-run cpu": []}
    for _ in range(repeats):
        if not warm:
            shutil.rmtree(cache, ignore_errors=True)
        out["load"].append(load_once(ev, env))
        for name, args in (("validate", ["validate", str(ev)]),
                           ("dry-run", ["run", str(ev), "--dry-run"])):
            if not warm:
                shutil.rmtree(cache, ignore_errors=True)
            wall, cpu = command_once(args, env)
            out[name].append(wall)
            out[f"{name} cpu"].append(cpu)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ev = make_jsonl_eval(Path(tmp) / "rows", opts.rows)
        size = (ev / "tasks" / "questions.jsonl").stat().st_size
        print(f"An Eval of {opts.rows:,} JSONL rows ({size / 1e6:.1f} MB), "
              f"median of {opts.repeats}:")
        time.sleep(2.1)          # out of the racy window (store/index.py RACY_NS): cacheable
        cache = Path(tmp) / "cache"
        for label, warm in (("cold", False), ("warm", True)):
            if warm:
                command_once(["validate", str(ev)], {**os.environ,
                                                     "SMEVALS_CACHE_DIR": str(cache)})
            found = measure(ev, cache, warm, opts.repeats)
            med = {k: statistics.median(v) for k, v in found.items()}
            print(f"  {label}: load {med['load']:.3f} s; "
                  f"validate {med['validate']:.2f} s wall, {med['validate cpu']:.2f} s CPU; "
                  f"run --dry-run {med['dry-run']:.2f} s wall, {med['dry-run cpu']:.2f} s CPU")


if __name__ == "__main__":
    main()
