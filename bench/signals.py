"""Signal campaign: SIGTERM (or SIGINT) `smevals run -j 4 -g` at random moments, from its
start to its end, and count the exit codes and the processes its children left behind.

Each runner and checker starts a detached `setsid` sleeper and sleeps a little; every process
they start carries a tag on its command line, so survivors are found by a scan of /proc
(and killed). Every figure is printed; the exit code is 1 when an exit was not 130 (for a
run that was not over before the signal) or a process survived.

Usage: python bench/signals.py [--trials 8] [--earliest 0] [--latest 2.0] [--seed 1] [--signal TERM]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import SMEVALS, make_eval, write  # noqa: E402
from tools.processes import tagged  # noqa: E402

RUNNER = """#!/bin/sh
setsid sh -c 'exec sleep 45.{tag}' </dev/null >/dev/null 2>&1 &
sleep 0.{tag}
echo answer
"""
SUMMARY = re.compile(r"^\d+ ok, \d+ failed\n\Z", re.M)
CHECKER = """#!/bin/sh
setsid sh -c 'exec sleep 46.{tag}' </dev/null >/dev/null 2>&1 &
sleep 0.{tag}
"""


def trial(root: Path, n: int, delay: float, sig: int) -> tuple[int | str, int, str]:
    """(exit code, or 'finished' when smevals ended before the signal or was over when it
    came; survivors; the last line of stderr). Over: its summary printed and its exit code
    given, after which a signal is ignored by design (smevals.proc.signals.finish): a
    signal that came any earlier makes the exit 130."""
    tag = f"{os.getpid() % 1000}{n:03d}"
    ev = make_eval(root / f"ev{n}", 8, RUNNER.format(tag=tag),
                   "checks:\n  - checker: ./c.sh\n")
    write(ev / "graders" / "c.sh", CHECKER.format(tag=tag), executable=True)
    proc = subprocess.Popen([SMEVALS, "run", str(ev), "-j", "4", "-g", "default"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    finished = proc.poll() is not None
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    code = proc.returncode
    over = code in (0, 1) and bool(SUMMARY.search(out)) and "Interrupted" not in err
    time.sleep(1.0)                    # what the guardian kills, it kills within this
    left = tagged(tag)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    last = (err.strip().splitlines() or [""])[-1]
    return ("finished" if finished or over else code), len(left), last


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=8)
    ap.add_argument("--earliest", type=float, default=0.0, help="earliest moment, in seconds")
    ap.add_argument("--latest", type=float, default=2.0, help="latest moment, in seconds")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--signal", choices=("TERM", "INT"), default="TERM")
    args = ap.parse_args()
    sig = signal.Signals[f"SIG{args.signal}"]
    rng = random.Random(args.seed)
    codes: collections.Counter[int | str] = collections.Counter()
    survived = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.trials):
            delay = rng.uniform(args.earliest, args.latest)
            code, left, last = trial(Path(tmp), n, delay, sig)
            codes[code] += 1
            survived += bool(left)
            print(f"trial {n}: {sig.name} after {delay:.2f} s: exit {code}, "
                  f"{left} process(es) left; stderr: {last[:90]}")
    print(f"exit codes: {dict(codes)} (must all be 130, or 'finished')")
    print(f"trials that left a process: {survived} of {args.trials} (must be 0)")
    bad = sum(v for k, v in codes.items() if k not in (130, "finished"))
    return 1 if bad or survived else 0


if __name__ == "__main__":
    sys.exit(main())
