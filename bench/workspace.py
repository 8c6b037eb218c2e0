"""The cost of a Task's starting files per Run: hashing them (at the plan, cold and warm),
copying them into the Run's workspace, settling the Run after the agent (unchanged files
removed, `workspace.diff` written) and rebuilding the final tree for a Grade.

A workspace of N files (`--files`, default 1,000, of `--size` bytes each, in folders of 50)
and an agent that changed 10 files, added 5 and deleted 5. Each figure is the minimum over
`--repeats` rounds, in milliseconds, beside the time `shutil.copytree` takes to copy the
same files on this machine (creating files dominates both). The issue's target for copy,
diff and sandbox together is 150 ms per Run for 1,000 files (the sandbox is measured by
bench/agent.py).

Usage: python bench/workspace.py [--files N] [--size BYTES] [--repeats R]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from smevals.evaldef import workspace  # noqa: E402
from smevals.evaldef.load import load_eval  # noqa: E402
from smevals.evaldef.model import Eval, Task  # noqa: E402
from smevals.files.workspace import open_dir  # noqa: E402
from smevals.grade.tree import FinalTree  # noqa: E402
from smevals.run.workspace import settle  # noqa: E402


def make(root: Path, files: int, size: int) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "eval.yaml").write_text("name: bench\n")
    (root / "tasks" / "t.yaml").write_text("prompt: p\nworkspace: ws\n")
    line = b"x" * 63 + b"\n"
    body = (line * (size // 64 + 1))[:size]
    for i in range(files):
        path = root / "ws" / f"d{i // 50:03d}" / f"f{i:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    return root


def agent(folder: Path, files: int) -> None:
    """Change 10 files, add 5, delete 5 (fewer in a tiny workspace)."""
    names = sorted(p for p in folder.rglob("*.txt"))
    for path in names[: min(10, files)]:
        path.write_bytes(path.read_bytes() + b"changed\n")
    for path in names[min(10, files):min(15, files)]:
        path.unlink()
    for i in range(5):
        (folder / f"new{i}.txt").write_text(f"new file {i}\n")


def best(repeats: int, step: Callable[[], float]) -> float:
    return min(step() for _ in range(repeats)) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="smevals-bench-ws-"))
    try:
        ev = load_eval(make(base / "ev", args.files, args.size), cached=False)
        task = ev.tasks[0]
        figures = measure(base, ev, task, args)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"workspace of {args.files} files of {args.size} bytes; best of {args.repeats} "
          "rounds, ms per Run (or per Grade)")
    for name, value in figures:
        print(f"  {name:<42} {value:8.1f}")


def measure(base: Path, ev: Eval, task: Task, args: argparse.Namespace
            ) -> list[tuple[str, float]]:
    def cold() -> float:
        workspace.forget()
        start = time.perf_counter()
        workspace.starting(task)
        return time.perf_counter() - start

    def warm() -> float:
        start = time.perf_counter()
        workspace.starting(task)
        return time.perf_counter() - start

    def baseline() -> float:
        target = base / f"copytree{time.perf_counter_ns()}"
        start = time.perf_counter()
        shutil.copytree(base / "ev" / "ws", target)
        return time.perf_counter() - start

    start_files = workspace.starting(task)
    assert start_files is not None
    rounds: list[tuple[float, float, float]] = []
    for index in range(args.repeats):
        rounds.append(_one_run(base / f"run{index}", ev, start_files, args.files))
    copy, settled, tree = (min(r[i] for r in rounds) * 1000 for i in range(3))
    return [("hash the starting files (cold)", best(args.repeats, cold)),
            ("hash the starting files (warm: unchanged)", best(args.repeats, warm)),
            ("copy into the Run's workspace", copy),
            ("settle: compare, remove unchanged, diff", settled),
            ("copy + settle (per Run)", copy + settled),
            ("rebuild the final tree (per Grade)", tree),
            ("baseline: shutil.copytree of the same files", best(args.repeats, baseline))]


def _one_run(folder: Path, ev: Eval, start_files: workspace.Starting,
             files: int) -> tuple[float, float, float]:
    folder.mkdir()
    fd = open_dir(folder)
    try:
        t0 = time.perf_counter()
        workspace.copy_in(start_files, fd)
        t1 = time.perf_counter()
        agent(folder, files)
        t2 = time.perf_counter()
        done = settle(start_files, fd)
        t3 = time.perf_counter()
    finally:
        os.close(fd)
    record = {"task": {"name": "t"}, "workspace": done.record()}
    tree = FinalTree(ev, record, folder)
    t4 = time.perf_counter()
    tree.path()
    t5 = time.perf_counter()
    tree.close()
    return t1 - t0, t3 - t2, t5 - t4


if __name__ == "__main__":
    main()
