"""Two commands at once never duplicate work (claims in the staging area, which die with
their holder); `run -g` grades what an interrupt left ungraded; the worker threads of `-j`
are all waited for when an interrupt or an error stops them as they start."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import SMEVALS, make_eval, wait_for, write

SLOW_RUNNER = "#!/bin/sh\nsleep 0.2\necho \"$SMEVALS_MODEL says: $SMEVALS_PROMPT\"\n"
SLOW_CHECK = "#!/bin/sh\nsleep 0.3\necho '{\"score\": 1}'\n"


def slow_eval(tmp_path: Path, tasks: int = 2) -> Path:
    return make_eval(tmp_path / "ev", tasks={f"t{i}": f"prompt: p{i}\n" for i in range(tasks)},
                     configs={"default": "runner: ./slow.sh\nmodel: m1\n"},
                     graders={"default": "checks:\n  - checker: ./check.sh\n"},
                     files={"configs/slow.sh": SLOW_RUNNER, "graders/check.sh": SLOW_CHECK})


def cells(ev: Path) -> Counter[str]:
    return Counter(p.parent.relative_to(ev / "results" / "runs").parts[0]
                   for p in (ev / "results" / "runs").glob("*/*/*/*/run.json"))


def graded(ev: Path) -> Counter[str]:
    return Counter(json.loads(p.read_text())["run"]["id"]
                   for p in (ev / "results" / "grades").glob("*/*/*/*/*/grade.json"))


def both(*commands: list[str]) -> list[subprocess.CompletedProcess[str]]:
    procs = [subprocess.Popen([SMEVALS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for args in commands]
    outs = [p.communicate(timeout=120) for p in procs]
    return [subprocess.CompletedProcess(p.args, p.returncode, o, e)
            for p, (o, e) in zip(procs, outs, strict=True)]


def test_two_run_n_8_at_once_make_exactly_8_runs_per_cell(cli, tmp_path: Path):
    ev = slow_eval(tmp_path)
    res = cli("run", str(ev), "-n", "3", "-j", "6")          # alone, many workers: all made
    assert (res.code, res.out.splitlines()[-1]) == (0, "6 ok, 0 failed")
    done = both(["run", str(ev), "-n", "8", "-j", "3"], ["run", str(ev), "-n", "8", "-j", "3"])
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    assert cells(ev) == {"t0": 8, "t1": 8}
    samples = sorted(json.loads(p.read_text())["sample"]
                     for p in (ev / "results" / "runs" / "t0").rglob("run.json"))
    assert samples == list(range(8))
    assert list((ev / "results" / ".staging" / ".claims").iterdir()) == []   # all released


def test_two_grade_at_once_grade_each_run_once(cli, tmp_path: Path):
    ev = slow_eval(tmp_path, tasks=3)
    assert cli("run", str(ev), "-n", "2").code == 0
    done = both(["grade", str(ev), "-j", "2"], ["grade", str(ev), "-j", "2"])
    assert [d.returncode for d in done] == [0, 0], [d.stderr for d in done]
    counted = graded(ev)
    assert len(counted) == 6 and set(counted.values()) == {1}
    assert list((ev / "results" / ".staging" / ".claims").iterdir()) == []
    res = cli("report", str(ev), "--json")
    assert json.loads(res.out)["evals"][0]["summary"]["graded"] == 6


def test_a_claim_dies_with_its_holder(cli, tmp_path: Path):
    """A `run -n` killed with SIGKILL while it holds claims blocks nobody afterwards."""
    ev = make_eval(tmp_path / "ev", tasks={"t0": "prompt: p\n"},
                   configs={"default": "runner: ./hang.sh\nmodel: m1\n"},
                   files={"configs/hang.sh": "#!/bin/sh\nsleep 1.5\necho ok\n"})
    proc = subprocess.Popen([SMEVALS, "run", str(ev), "-n", "2"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    claims = ev / "results" / ".staging" / ".claims"
    wait_for(lambda: claims.is_dir() and any(claims.iterdir()), "the run to hold a claim")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    res = cli("run", str(ev), "-n", "2", timeout=30)
    assert (res.code, res.out.splitlines()[-1]) == (0, "2 ok, 0 failed")
    assert cells(ev) == {"t0": 2}


def test_run_g_grades_runs_an_interrupt_left_ungraded(cli, tmp_path: Path):
    ev = make_eval(tmp_path / "ev")
    assert cli("run", str(ev), "-n", "2").code == 0          # as if -g had been interrupted
    res = cli("run", str(ev), "-n", "2", "-g")
    assert res.code == 0, res.both
    lines = res.out.splitlines()
    assert lines[0] == "ev: 0 Run(s) to make with config 'default' (2 task/model pair(s), 2 " \
                       "with earlier Runs of the same inputs)"
    assert len(lines) == 6 and lines[-1] == "0 ok, 0 failed"
    assert all(line.endswith("(no current Grade) ... grade: pass") for line in lines[1:5])
    assert len(graded(ev)) == 4
    again = cli("run", str(ev), "-n", "2", "-g")
    assert again.out.splitlines()[1:] == ["0 ok, 0 failed"]
    assert len(graded(ev)) == 4
    write(ev / "configs" / "other.yaml", "runner: ./echo.sh\nmodel: m2\n")
    write(ev / "tasks" / "three.yaml", "prompt: hello three\n")
    assert cli("run", str(ev), "-t", "three").code == 0       # ungraded, default config
    res = cli("run", str(ev), "-c", "other", "-t", "one", "-g")
    assert res.code == 0 and "no current Grade" not in res.out   # not in its selection
    assert len(graded(ev)) == 5


def test_a_first_run_g_reads_the_store_again_only_when_a_run_may_be_left(
        cli, tmp_path: Path, monkeypatch) -> None:
    """With no Run in its selection when it started and every Run it made graded, `run -g`
    does not read the whole store again to look for Runs left without a Grade."""
    import smevals.commands.grade as grading

    looked: list[int] = []
    real = grading.grade_leftovers

    def counted(*args: Any, **kwargs: Any) -> None:
        looked.append(1)
        real(*args, **kwargs)

    monkeypatch.setattr(grading, "grade_leftovers", counted)
    ev = make_eval(tmp_path / "ev")
    assert cli("run", str(ev), "-n", "2", "-g").code == 0
    assert (looked, len(graded(ev))) == ([], 4)
    assert cli("run", str(ev), "-n", "3", "-g").code == 0           # earlier Runs: it looks
    assert (looked, len(graded(ev))) == ([1], 6)
    write(ev / "tasks" / "three.yaml", "prompt: hello three\n")
    assert cli("run", str(ev), "-t", "three").code == 0             # ungraded, then -g again
    res = cli("run", str(ev), "-t", "three", "-n", "2", "-g")
    assert res.code == 0 and looked == [1, 1] and len(graded(ev)) == 8, res.both
    assert "(no current Grade) ... grade: pass" in res.out


CONTEND = """
import sys
from pathlib import Path
from smevals.store.claims import Claims

root, rounds = Path(sys.argv[1]), int(sys.argv[2])
claims = Claims(root, "test")
counter = root / "counter"
for _ in range(rounds):
    with claims.hold("one key") as got:
        assert got
        counter.write_text(str(int(counter.read_text()) + 1))   # read, then write: racy unclaimed
"""


def test_lock_files_removed_on_release_keep_claims_exclusive(tmp_path: Path):
    """Processes that lock, release (removing the lock file) and lock again the same claim
    never hold it at once: no increment of a shared counter is lost."""
    import sys

    (tmp_path / "counter").write_text("0")
    procs = [subprocess.Popen([sys.executable, "-c", CONTEND, str(tmp_path), "150"],
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    errs = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], errs
    assert (tmp_path / "counter").read_text() == "600"
    assert list((tmp_path / ".staging" / ".claims").iterdir()) == []


INTERRUPT_AS_THEY_START = """
import os, signal, sys, threading, time
from smevals.proc import signals
from smevals.run.engine import Interrupted, run_pool

signals.install()
cleaned = []

def work(item):
    try:
        if item == 0:       # the first job interrupts the command while the others start
            os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.3)
    finally:
        cleaned.append(item)   # a job's clean-up (its staging folder's removal)

try:
    run_pool(range(8), work, 4, lambda r: None, lambda: None)
except Interrupted:
    print("interrupted, cleaned", sorted(cleaned))
except KeyboardInterrupt:
    print("raw interrupt, cleaned", sorted(cleaned))
"""


def test_an_interrupt_while_the_jobs_start_waits_for_their_clean_up(tmp_path: Path):
    """Ctrl-C that lands while `-j N` starts its worker threads (they run jobs at once)
    stops the session like one later: every started job ends, clean-up included, before
    the command exits. It used to escape as a bare interrupt, leaving the jobs' staging
    folders behind."""
    import sys

    done = subprocess.run([sys.executable, "-c", INTERRUPT_AS_THEY_START], capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "interrupted, cleaned [0, 1, 2, 3]\n", "")


def test_a_worker_that_cannot_start_is_the_error_reported(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine refuses a second thread (out of threads): the first is stopped and waited
    for, and that error is what the caller gets, not one about joining a thread that never
    started."""
    import threading

    from smevals.run.engine import run_pool

    started: list[int] = []
    real_start = threading.Thread.start

    def start(self: threading.Thread) -> None:
        if started:
            raise RuntimeError("can't start new thread")
        started.append(1)
        real_start(self)

    monkeypatch.setattr(threading.Thread, "start", start)
    cancelled: list[bool] = []
    with pytest.raises(RuntimeError, match="can't start new thread"):
        run_pool(range(4), lambda item: item, 3, lambda r: None, lambda: cancelled.append(True))
    assert cancelled == [True]
