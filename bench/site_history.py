"""Benchmark the web report's History page: `build --history N` (the history and a diff page
per commit) and `serve` (the History page and one commit's diff page, made on request), on
the history bench/log.py builds (each commit adds a slice of the Runs with their Grades,
every fifth regrades 300 earlier Runs).

Printed: `build` without and with `--history N`, cold (no cache) and warm; under `serve`,
the first request of data/ev/history.js (the history read), the same again (kept), and the
diff page of the newest commit. Figures are printed, never asserted.

Usage: python bench/site_history.py [--tasks 500] [--models 4] [--repeats 5] [--commits 20]
                                    [--smoke]
"""

from __future__ import annotations

import argparse
import http.client
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import SMOKE  # noqa: E402
from bench.log import build  # noqa: E402
from bench.report import clocked  # noqa: E402


def get(port: int, path: str) -> str:
    """Wall time of one request, and the CPU time of this process and its git children
    (the server runs in it)."""
    start, cpu = time.perf_counter(), cpu_seconds()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    assert response.status == 200, (path, response.status, body[:200])
    return (f"{time.perf_counter() - start:.2f}s wall, {cpu_seconds() - cpu:.2f}s CPU "
            f"(load {os.getloadavg()[0]:.1f})")


def cpu_of(command: Callable[[], object]) -> float:
    """The CPU time of the child processes `command` ran."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    command()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_seconds() -> float:
    return sum(getattr(resource.getrusage(who), f) for who in
               (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN) for f in ("ru_utime", "ru_stime"))


def served(root: Path, base: Path, n: int) -> None:
    """The History page and a diff page from `serve`, in this process."""
    os.environ["SMEVALS_CACHE_DIR"] = str(base / "cache")
    from smevals.commands.site import SiteOptions, make_server

    server = make_server(SiteOptions((str(root / "ev"),), history=n), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
        diff = f"/data/bench/diffs/{head}.js"
        for label, path in (("serve: history.js, first request", "/data/bench/history.js"),
                            ("serve: history.js, again", "/data/bench/history.js"),
                            ("serve: diffs/<HEAD>.js, first request", diff),
                            ("serve: diffs/<HEAD>.js, again", diff)):
            print(f"{label}: {get(port, path)}")
    finally:
        server.shutdown()
        server.server_close()


def measure(root: Path, base: Path, opts: argparse.Namespace) -> None:
    n = str(opts.commits)
    cold = {"SMEVALS_CACHE_DIR": str(base / "cold")}
    env = {"SMEVALS_CACHE_DIR": str(base / "cache")}
    site = str(base / "site")
    clocked("build (no history), warm-up", ["build", "ev", "-o", site], env, root)
    plain = cpu_of(lambda: clocked("build (no history), warm", ["build", "ev", "-o", site],
                                   env, root))
    clocked(f"build --history {n}, cold (no cache)", ["build", "ev", "--history", n, "-o",
                                                      site], cold, root)
    warm = cpu_of(lambda: clocked(f"build --history {n}, warm", ["build", "ev", "--history",
                                                                 n, "-o", site], env, root))
    # CPU time: on a loaded machine wall times say more about the other processes
    print(f"the History page and {n} diff pages add {warm - plain:.2f}s of CPU to a warm "
          f"build ({(warm - plain) / opts.commits:.2f}s per commit)")
    served(root, base, opts.commits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--commits", type=int, default=20)
    parser.add_argument("--smoke", action="store_true", help="The smallest size (the tests).")
    opts: Any = parser.parse_args()
    if opts.smoke or SMOKE:
        opts.tasks, opts.models, opts.repeats, opts.commits = 6, 1, 1, 3
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        build(root, opts)
        measure(root, Path(tmp), opts)


if __name__ == "__main__":
    main()
