"""What an agent Run costs smevals itself, model time excluded.

1. Per Run, for a Task whose workspace holds N files (1,000 by default, 1 KiB each in 20
   folders): hashing the starting files (a fresh process hashes them once: `tree_of` on an
   Eval folder not seen before), copying them into the Run's workspace (`copy_in`),
   settling the Run after the agent changed 10 files, added 5 and deleted 2 (`settle`:
   unchanged files removed, `workspace.diff` written), and starting one command in the
   sandbox (`run_sandboxed` of `true`, the containment this machine gives). Target: the
   sum <= 150 ms.
2. Per tool call of `smevals:agent` on a recorded session (replay backend: no model time):
   a session of C calls of `write_file` then `read_file` (the loop and the confined file
   tools), and one of C `bash` calls (the loop and one sandboxed command each), each
   divided by its calls. Target: <= 10 ms per call for the loop itself (the file tools'
   figure; a bash call adds a sandbox start, figure 1's last line).

Each figure is the median of `--trials` trials (the per-Run steps: and the best); the
machine may be shared.

Usage: python bench/agent.py [--files N] [--calls C] [--trials T] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench import _common  # noqa: E402

TARGET_RUN_MS = 150.0
TARGET_AGAIN_MS = 60.0
TARGET_CALL_MS = 10.0


def make_tree(root: Path, files: int) -> None:
    for i in range(files):
        path = root / f"pkg{i % 20:02d}" / f"mod{i:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# module {i}\n" + "x = 1\n" * 170)


def agent_work(workspace: Path) -> None:
    """What the agent did: 10 files changed, 5 added, 2 deleted."""
    for i in range(10):
        with open(workspace / f"pkg{i % 20:02d}" / f"mod{i:05d}.py", "a") as handle:
            handle.write("y = 2\n")
    for i in range(5):
        (workspace / f"new{i}.py").write_text("print('new')\n")
    for i in (10, 11):
        (workspace / f"pkg{i % 20:02d}" / f"mod{i:05d}.py").unlink()


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def one_run(source: Path, workspace: Path, backend: str = "auto") -> dict[str, float]:
    """The per-Run steps once, in milliseconds."""
    from smevals.evaldef.workspace import copy_in, past_tick, tree_of
    from smevals.files.workspace import open_dir
    from smevals.proc.policy import Policy
    from smevals.proc.sandbox import run_sandboxed, sandbox_env
    from smevals.run.workspace import settle

    got: dict[str, float] = {}
    start = time.perf_counter()
    tree = tree_of(source, "ws")
    got["hash"] = ms(start)
    workspace.mkdir()
    fd = open_dir(workspace)
    try:
        start = time.perf_counter()
        stamps = copy_in(tree, fd)
        past_tick(fd, stamps)                    # as run/attempt.py does
        got["copy"] = ms(start)
        agent_work(workspace)
        start = time.perf_counter()
        settle(tree, fd, stamps)
        got["settle"] = ms(start)
    finally:
        os.close(fd)
    policy = Policy(timeout=10, env=sandbox_env(os.environ, workspace), backend=backend)
    start = time.perf_counter()
    out = run_sandboxed(["true"], workspace, policy)
    got["sandbox"] = ms(start)
    if out.exit_code != 0:
        raise SystemExit(f"the sandbox could not run true: {out}")
    return got


def per_run(files: int, trials: int, tmp: Path,
            backend: str) -> tuple[dict[str, float], dict[str, float]]:
    """The per-Run steps of a Task's first Run (its files hashed) and of a Run after it
    (median and best of `trials`, each on a Task not seen before)."""
    template = tmp / "template"
    make_tree(template / "ws", files)
    from smevals.proc.policy import Policy
    from smevals.proc.sandbox import describe, sandbox_env

    policy = Policy(timeout=1, env=sandbox_env(os.environ, tmp), backend=backend)
    print(f"sandbox here: {describe(policy)}")
    one_run(_copy(template, tmp / "warm"), tmp / "warm-ws", backend)  # imports, the probe
    first, again = [], []
    for t in range(trials):
        source = _copy(template, tmp / f"eval{t}")
        first.append(one_run(source, tmp / f"ws{t}", backend))
        again.append(one_run(source, tmp / f"ws{t}-again", backend))
    return _summed(first), _summed(again)


def _summed(rows: list[dict[str, float]]) -> dict[str, float]:
    best = {key: min(row[key] for row in rows) for key in rows[0]}
    return {**{key: statistics.median(row[key] for row in rows) for key in rows[0]},
            **{f"{key} best": value for key, value in best.items()}}


def _copy(template: Path, to: Path) -> Path:
    shutil.copytree(template, to)                    # a folder `tree_of` has not seen
    return to


def session(path: Path, calls: int, make: Callable[[int], list[dict[str, object]]]) -> None:
    lines: list[dict[str, object]] = [{"content": None, "tool_calls": make(i)}
                                      for i in range(calls)]
    lines.append({"content": "done"})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def file_calls(i: int) -> list[dict[str, object]]:
    name = f"notes/n{i // 2}.txt"
    if i % 2 == 0:
        return [{"name": "write_file", "arguments": {"path": name, "content": "x" * 2000}}]
    return [{"name": "read_file", "arguments": {"path": name}}]


def bash_calls(i: int) -> list[dict[str, object]]:
    return [{"name": "bash", "arguments": {"command": f"echo {i} > b{i}.txt"}}]


def loop_ms(tmp: Path, model: str, calls: int) -> float:
    """Milliseconds per tool call of one agent Run on a recorded session."""
    from smevals.runners import BuiltinContext, run_builtin

    workspace = tmp / f"run-{model}-{time.monotonic_ns()}"
    workspace.mkdir()
    ctx = BuiltinContext(
        config={"runner": "smevals:agent", "backend": "replay", "sessions": "sessions",
                "max_turns": calls + 1},
        config_dir=tmp, task={"name": "t", "prompt": "work"}, model=model, sample_index=0,
        workspace=workspace, timeout=None, environ=dict(os.environ),
        cancel=threading.Event())
    start = time.perf_counter()
    outcome = run_builtin("agent", ctx)
    took = ms(start)
    if outcome.exit_code != 0:
        raise SystemExit(f"the agent Run failed: {outcome.stderr}")
    return took / calls


def per_call(calls: int, trials: int, tmp: Path) -> dict[str, float]:
    session(tmp / "sessions" / "files" / "t.jsonl", calls, file_calls)
    session(tmp / "sessions" / "bash" / "t.jsonl", calls, bash_calls)
    loop_ms(tmp, "files", calls)                                          # warm: imports
    return {model: statistics.median(loop_ms(tmp, model, calls) for _ in range(trials))
            for model in ("files", "bash")}


def show(run: dict[str, float], title: str, target: float) -> None:
    steps = ("hash", "copy", "settle", "sandbox")
    total = sum(run[key] for key in steps)
    best = sum(run[f"{key} best"] for key in steps)
    print(f" {title}:")
    for key, words in zip(steps, ("hash the starting files (or check them unchanged)",
                                  "copy them into the workspace",
                                  "settle: drop unchanged, write workspace.diff",
                                  "start one command in the sandbox"), strict=True):
        print(f"  {words:<50} {run[key]:8.1f} ms {run[key + ' best']:8.1f} ms")
    verdict = "within" if total <= target else "ABOVE"
    print(f"  {'total':<50} {total:8.1f} ms {best:8.1f} ms  ({verdict} the {target:g} ms "
          "target)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--backend", default="auto",
                        help="the sandbox backend (auto, unshare, bwrap, ...)")
    parser.add_argument("--smoke", action="store_true", help="the smallest sizes")
    args = parser.parse_args()
    if args.smoke or _common.SMOKE:
        args.files, args.calls, args.trials = 20, 4, 1
    from smevals.proc import own_process

    own_process()       # as the command line: a subreaper, so no scan of /proc per start
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as name:
        tmp = Path(name)
        first, again = per_run(args.files, args.trials, tmp, args.backend)
        print(f"per Run, workspace of {args.files} files (median and best of {args.trials}), "
              f"load average {os.getloadavg()[0]:.1f}:")
        show(first, "a Task's first Run", TARGET_RUN_MS)
        show(again, "a Run after its Task's first", TARGET_AGAIN_MS)
        call = per_call(args.calls, args.trials, tmp)
        print(f"per tool call of smevals:agent, replayed session of {args.calls} calls:")
        verdict = "within" if call["files"] <= TARGET_CALL_MS else "ABOVE"
        print(f"  {'write_file / read_file (the loop itself)':<46} {call['files']:8.2f} ms  "
              f"({verdict} the {TARGET_CALL_MS:g} ms target)")
        print(f"  {'bash (the loop and one sandboxed command)':<46} {call['bash']:8.2f} ms")


if __name__ == "__main__":
    main()
