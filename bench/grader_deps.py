"""Benchmark the grader version with dependency discovery (grade/deps.py).

Prints the time of one `version_files(grader)` (which does the work of `grader_version` and
a little more; `grade`, `report` and each side of `diff` compute them once per grader) for:
  - each shipped suite's grader (no dependencies: the cost of looking for them),
  - a grader whose Python checker imports a chain of --modules modules of --lines lines
    each, and the same with a shell checker sourcing --modules files,
  - a Check whose `depends:` glob matches --files data files of --size bytes each.

Usage: python bench/grader_deps.py [--modules 200] [--lines 300] [--files 500]
                                   [--size 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smevals.evaldef.load import load_eval  # noqa: E402
from smevals.grade.version import version_files  # noqa: E402


def timed(ev: Path, repeats: int) -> tuple[float, float, int]:
    """Median wall and CPU milliseconds of one version_files, and how many parts it lists."""
    grader = load_eval(ev, cached=False).graders["default"]
    walls, cpus = [], []
    for _ in range(repeats):
        start, cpu = time.perf_counter(), time.process_time()
        files = version_files(grader)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000, len(files)


def write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def make(root: Path, kind: str, args: argparse.Namespace) -> Path:
    ev = root / kind
    write(ev / "eval.yaml", f"name: {kind}\n")
    write(ev / "tasks" / "t.yaml", "prompt: hi\n")
    checks = {"python": "./check.py", "shell": "./check.sh", "depends": "contains"}[kind]
    extra = "    value: x\n    depends: ../data/**\n" if kind == "depends" else ""
    write(ev / "graders" / "default.yaml", f"checks:\n  - checker: {checks}\n{extra}")
    body = "".join(f"X{i} = {i}\n" for i in range(args.lines))
    if kind == "python":
        write(ev / "graders" / "check.py", "#!/usr/bin/env python3\nimport m0\n", 0o755)
        for i in range(args.modules):
            write(ev / "graders" / f"m{i}.py", f"import os, json\nimport m{i + 1}\n{body}")
    elif kind == "shell":
        write(ev / "graders" / "check.sh", "#!/bin/sh\n. ./s0.sh\n", 0o755)
        for i in range(args.modules):
            lines = "".join(f"X{j}={j}\n" for j in range(args.lines))
            write(ev / "graders" / f"s{i}.sh", f'. "$(dirname "$0")/s{i + 1}.sh"\n{lines}')
    else:
        for i in range(args.files):
            write(ev / "data" / f"d{i % 10}" / f"f{i}.txt", "x" * args.size)
    return ev


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modules", type=int, default=200)
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--files", type=int, default=500)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    for ev in sorted((ROOT / "suites").iterdir()):
        if (ev / "eval.yaml").is_file():
            wall, cpu, n = timed(ev, args.repeats)
            print(f"suites/{ev.name:<20} {wall:8.2f} ms wall {cpu:8.2f} ms CPU  ({n} parts)")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("python", "shell", "depends"):
            wall, cpu, n = timed(make(Path(tmp), kind, args), args.repeats)
            print(f"{kind:<27} {wall:8.2f} ms wall {cpu:8.2f} ms CPU  ({n} parts)")


if __name__ == "__main__":
    main()
