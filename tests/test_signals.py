"""SIGTERM and SIGINT end smevals with exit 130 at every moment, and leave no process of
its children behind, detached (`setsid`) ones included (issue 24 item 13)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.conftest import SMEVALS, make_eval
from tools.processes import tagged

# Each runner and checker starts a detached sleeper (its own session, re-parented once its
# shell is gone), writes a marker, then sleeps (runners only when `slow-runner` exists).
# Every process they start has TAG on its command line, so survivors are found from here.
RUNNER = """#!/bin/sh
setsid sh -c 'exec sleep 45.{tag}' </dev/null >/dev/null 2>&1 &
touch "$SMEVALS_EVAL_DIR/runner.$$"
[ -e "$SMEVALS_EVAL_DIR/slow-runner" ] && exec sleep 30.{tag}
echo answer
"""
CHECKER = """#!/bin/sh
setsid sh -c 'exec sleep 46.{tag}' </dev/null >/dev/null 2>&1 &
touch "$SMEVALS_EVAL_DIR/checker.$$"
exec sleep 31.{tag}
"""


def catches(pid: int, sig: int) -> bool:
    """Whether process `pid` has a handler for `sig` (SigCgt in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(mask, 16) >> (sig - 1) & 1)


def wait_for(what: Callable[[], bool], within: float = 30.0) -> None:
    end = time.monotonic() + within
    while not what():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.01)


def markers(ev: Path, kind: str) -> int:
    return sum(1 for p in ev.iterdir() if p.name.startswith(kind + "."))


SLEEPER = """
import os, pathlib
pathlib.Path("{ev}/checker.1").touch()
os.execvp("sleep", ["sleep", "32.{tag}"])
"""


def command(ev: Path, tag: str, moment: str) -> list[str]:
    """`run -j 4 -g` (runners sleep while `runners` is the moment), or `check` of a
    match_output program that sleeps (with the machine's files in sight: its marker goes
    into the Eval's folder)."""
    if moment.startswith("check"):
        spec = ('{"checker": "match_output", "expected_output": "", "timeout": 60, '
                '"sandbox": {"view": "host"}}')
        return [SMEVALS, "check", spec, "--output", SLEEPER.format(ev=ev, tag=tag)]
    if moment == "runners":
        (ev / "slow-runner").touch()
    return [SMEVALS, "run", str(ev), "-j", "4", "-g", "default"]


def trial(tmp_path: Path, n: int, moment: str, sig: int = signal.SIGTERM) -> None:
    tag = f"{os.getpid()}{n:03d}"
    ev = make_eval(tmp_path / f"ev{n}", tasks={f"t{i}": "prompt: p\n" for i in range(4)},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   graders={"default": "checks:\n  - checker: ./c.sh\n"},
                   files={"configs/r.sh": RUNNER.format(tag=tag),
                          "graders/c.sh": CHECKER.format(tag=tag)})
    proc = subprocess.Popen(command(ev, tag, moment), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        if moment.endswith("start"):   # as soon as smevals runs its first line (see the docs)
            wait_for(lambda: catches(proc.pid, signal.SIGTERM) or proc.poll() is not None)
        elif moment == "runners":
            wait_for(lambda: markers(ev, "runner") == 4)
        else:
            wait_for(lambda: markers(ev, "checker") >= 1)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, (moment, n, proc.returncode, err)
        # what smevals killed may take a moment to die on loaded cores: the wait is a
        # deadline. (A sleeper that outlived it was one whose tag was missed while it
        # exec'd: docs/reliability.md, "The signal window"; bench/signal_window.py.)
        end = time.monotonic() + 10
        while tagged(tag) and time.monotonic() < end:
            time.sleep(0.05)
        assert tagged(tag) == [], (moment, n)
    finally:
        proc.kill()
        proc.wait()
        for pid in tagged(tag):
            os.kill(pid, signal.SIGKILL)


MOMENTS = ["start", "runners", "grade", "check-start", "check"]


def test_sigterm_at_any_moment_is_130_and_leaves_no_process(tmp_path: Path) -> None:
    for n, moment in enumerate([*MOMENTS, "runners", "grade"]):
        trial(tmp_path, n, moment)


def test_sigint_at_any_moment_is_130_and_leaves_no_process(tmp_path: Path) -> None:
    for n, moment in enumerate(["start", "runners", "grade", "grade", "check"]):
        trial(tmp_path, n, moment, signal.SIGINT)


def test_the_guardian_kills_a_child_it_knew_only_by_its_tag(tmp_path: Path) -> None:
    # smevals killed (kill -9) after a child started but before it could send the child's
    # pid: the guardian had only the tag, sent before the start
    tag, arg = os.urandom(12).hex(), f"33.{os.getpid()}"
    # the shell never ends by itself (a loop of the `wait` builtin): it ends only by the
    # guardian's SIGKILL, whichever of the two tagged processes the guardian kills first
    child = subprocess.Popen(["sh", "-c", 'setsid sleep "$S" & while :; do wait; done'],
                             start_new_session=True,
                             env={**os.environ, "_SMEVALS_TREE": tag, "S": arg})
    try:
        wait_for(lambda: len(tagged(arg)) == 1)
        guardian = subprocess.Popen([sys.executable, "-I", "-m", "smevals.proc.guardian"],
                                    stdin=subprocess.PIPE)
        assert guardian.stdin is not None
        guardian.stdin.write(f"t {tag}\n".encode())
        guardian.stdin.close()                    # smevals is gone
        assert guardian.wait(timeout=20) == 0
        assert child.wait(timeout=5) == -signal.SIGKILL
        assert tagged(arg) == []
    finally:
        child.kill()
        child.wait()
        for pid in tagged(arg):
            os.kill(pid, signal.SIGKILL)
