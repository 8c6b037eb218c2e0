"""Crash campaign: SIGKILL `smevals run -n N -g` at random moments, again and again, then top up.

After every kill, `report --json` and `verify --json` look at the store: any object they see
that is not complete (damaged, missing files, a record that does not hash to its id) is a
partial object, and there must be none; staging leftovers of the killed writer are expected
(and removed by `gc` at the end). Finally one `run -n N -g` that nobody kills must bring every
cell to exactly N successful Runs, each with a current Grade.

Every figure is printed; nothing is asserted, but the exit code is 1 when a "must" fails.

Usage: python bench/crash.py [--kills 30] [--tasks 4] [--repeat 150] [--seed 1] [--jobs 4]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import SMEVALS, make_eval  # noqa: E402

RUNNER = """#!/bin/sh
# a little work, an artifact beside the output, and a random pause
head -c 20000 /dev/urandom > artifact.bin
sleep 0.0$(( $(od -An -N1 -tu1 /dev/urandom) % 9 + 1 ))
echo "answer: $SMEVALS_TASK_EXPECTED"
"""
GRADER = "checks:\n  - checker: contains\n    value: answer\n"


def smevals(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SMEVALS, *args], capture_output=True, text=True, env=env,
                          timeout=300)


def look(ev: Path, env: dict[str, str]) -> tuple[int, int, int, int]:
    """(Runs report counts, partial objects report or verify sees, staging leftovers,
    report exit code)."""
    rep = smevals("report", str(ev), "--json", env=env)
    doc = json.loads(rep.stdout) if rep.stdout.strip().startswith("{") else {"evals": [{}]}
    runs = doc["evals"][0].get("summary", {}).get("runs", 0)
    damaged = len(doc["evals"][0].get("damaged", []))
    ver = smevals("verify", str(ev), "--json", env=env)
    problems = json.loads(ver.stdout).get("problems", []) if ver.stdout.strip() else []
    leftovers = sum(1 for p in problems if "staging leftover" in p["message"])
    partial = damaged + len(problems) - leftovers
    return runs, partial, leftovers, rep.returncode


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=150)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--min-delay", type=float, default=0.05)
    parser.add_argument("--max-delay", type=float, default=0.9)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    target = args.tasks * args.repeat
    with tempfile.TemporaryDirectory(prefix="smevals-crash-") as tmp:
        ev = make_eval(Path(tmp) / "ev", args.tasks, RUNNER, GRADER)
        env = {**os.environ, "SMEVALS_CACHE_DIR": str(Path(tmp) / "_cache")}
        kills = partial_seen = 0
        started = time.monotonic()
        attempts = 0
        while kills < args.kills and attempts < 3 * args.kills:
            attempts += 1
            proc = subprocess.Popen([SMEVALS, "run", str(ev), "-n", str(args.repeat), "-g",
                                     "-j", str(args.jobs)], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, env=env)
            time.sleep(rng.uniform(args.min_delay, args.max_delay))
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                kills += 1
            proc.wait()
            runs, partial, leftovers, code = look(ev, env)
            partial_seen += partial
            if partial:
                print(f"  after kill {kills}: {partial} partial object(s) seen", flush=True)
        campaign = time.monotonic() - started
        runs_before, _, leftovers, _ = look(ev, env)
        gc = smevals("gc", str(ev), "--grace", "0", env=env)
        top = smevals("run", str(ev), "-n", str(args.repeat), "-g", "-j", str(args.jobs),
                      env=env)
        rep = smevals("report", str(ev), "--json", env=env)
        summary = json.loads(rep.stdout)["evals"][0]["summary"]
        ver = smevals("verify", str(ev), env=env)
        print(f"kills: {kills} in {attempts} attempts ({campaign:.1f} s; a run that finished "
              "first was not killed)")
        print(f"partial objects seen by report/verify after the kills: {partial_seen} "
              "(must be 0)")
        print(f"Runs before the top-up: {runs_before}; staging leftovers: {leftovers} "
              f"({gc.stdout.strip().splitlines()[-1] if gc.stdout.strip() else 'gc: -'})")
        print(f"objects after top-up: {summary['runs']} Runs (target {target}), "
              f"{summary['graded']} graded (target {target}); top-up exit {top.returncode}; "
              f"verify: {(ver.stdout.strip().splitlines() or ['-'])[-1]}")
        ok = kills >= args.kills and partial_seen == 0 and summary["runs"] == target \
            and summary["graded"] == target and ver.returncode == 0
        print("OK" if ok else "FAILED")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
