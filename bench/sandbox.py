"""The sandbox's own cost: the private copy of a workspace (`private_copy`, N files of 1 KiB
in folders of 50), and starting `true` under each containment this machine gives (the
strongest local one in its own view of the filesystem, the default; the same with the
network allowed; with the machine's files in sight (`view: host`), also with everything
but the folder read-only, as the agent's `bash` did before the private view; and none),
median and best of R, the cases taken in turn (one run of each, R times) so that the load
of a shared machine weighs on each alike. SMEVALS_BENCH_BACKEND=bwrap (or unshare) asks
for that backend instead of `auto`.

Usage: python bench/sandbox.py [--files 1000] [--repeats 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import timed_calls as timed  # noqa: E402
from smevals.proc.private import private_copy  # noqa: E402
from smevals.proc.sandbox import Policy, describe, run_sandboxed, sandbox_env  # noqa: E402


def workspace(root: Path, files: int) -> Path:
    for i in range(files):
        path = root / f"d{i // 50:03d}" / f"f{i:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(512).hex().encode())
    return root



def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = workspace(Path(tmp) / "ws", args.files)
        copies = iter(range(10**9))

        def copy() -> None:
            private_copy(src, Path(tmp) / f"copy{next(copies)}")

        median, best = timed(copy, args.repeats)
        print(f"private_copy of {args.files} files of 1 KiB: {median:.1f} ms median, "
              f"{best:.1f} ms best ({args.repeats} copies)")
        home = Path(tmp) / "home"
        home.mkdir()
        env = sandbox_env(os.environ, home)
        backend = os.environ.get("SMEVALS_BENCH_BACKEND", "auto")
        cases: tuple[tuple[str, dict[str, Any]], ...] = (
            ("private view", {}), ("private view, network allowed", {"network": True}),
            ("host view", {"view": "host"}),
            ("host view, read-only", {"view": "host", "read_only": True}),
            ("none, host view", {"backend": "none", "view": "host"}))
        policies = [Policy(20, env, **{"backend": backend, **fields}) for _, fields in cases]
        for policy in policies:
            run_sandboxed(["true"], home, policy)           # the probes, once
        times: list[list[float]] = [[] for _ in cases]
        for _ in range(args.repeats):
            for kept, policy in zip(times, policies, strict=True):
                start = time.perf_counter()
                run_sandboxed(["true"], home, policy)
                kept.append((time.perf_counter() - start) * 1000)
        for (label, _), policy, kept in zip(cases, policies, times, strict=True):
            print(f"run_sandboxed(true), {label} ({describe(policy)}): "
                  f"{statistics.median(kept):.1f} ms median, {min(kept):.1f} ms best "
                  f"({args.repeats} runs)")

if __name__ == "__main__":
    main()
