"""smevals.proc.worker: a long-lived child answering framed requests, each with a deadline."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from smevals.proc.limits import Limits
from smevals.proc.worker import Worker, WorkerError

CHILD = """
import sys, time
from smevals.proc.worker import read_frame, write_frame
while True:
    request = read_frame(sys.stdin.buffer)
    if request is None:
        break
    if request == b"sleep":
        time.sleep(60)
    if request == b"exit":
        sys.exit(3)
    if request == b"big":
        sys.stdout.buffer.write((1 << 30).to_bytes(4, "big"))
        sys.stdout.buffer.flush()
        continue
    write_frame(sys.stdout.buffer, request.upper())
"""


@pytest.fixture
def worker():
    root = str(Path(__file__).resolve().parents[2])
    found = Worker([sys.executable, "-c", CHILD], {"PYTHONPATH": root},
                   Limits(memory_bytes=1 << 30), cap=1 << 20)
    yield found
    found.close()


def test_answers_and_restarts_after_each_failure(worker: Worker) -> None:
    assert worker.ask(b"hello", 20) == b"HELLO"
    first = worker._proc
    assert first is not None
    assert worker.ask(b"again", 20) == b"AGAIN" and worker._proc is first   # the same child
    with pytest.raises(WorkerError) as timed_out:
        worker.ask(b"sleep", 0.3)
    assert timed_out.value.timed_out and timed_out.value.reason == (
        "no answer before the deadline")
    assert first.returncode is not None                                  # killed, reaped
    assert worker.ask(b"back", 20) == b"BACK"
    with pytest.raises(WorkerError) as died:
        worker.ask(b"exit", 20)
    assert died.value.reason == "the worker exited with status 3" and not died.value.timed_out
    with pytest.raises(WorkerError) as big:
        worker.ask(b"big", 20)
    assert big.value.reason == f"answered {1 << 30} bytes, over the {1 << 20}-byte cap"
    assert worker.ask(b"last", 20) == b"LAST"


def test_a_child_that_cannot_start() -> None:
    with pytest.raises(WorkerError) as failed:
        Worker(["/nonexistent/renderer"], {}, Limits()).ask(b"x", 5)
    assert failed.value.reason.startswith("cannot start /nonexistent/renderer: ")


def test_a_worker_outlives_the_thread_that_started_it(worker: Worker) -> None:
    """A child's parent-death signal follows the *thread* that started it (prctl(2)): in
    `run -g -j 4` the job thread that rendered first may end while another one renders,
    and that render failed with the renderer killed (seen once in CI on suites/pelican)."""
    answers: list[bytes] = []
    thread = threading.Thread(target=lambda: answers.append(worker.ask(b"first", 20)))
    thread.start()
    thread.join()
    first = worker._proc
    assert answers == [b"FIRST"] and first is not None
    first_pid = first.pid
    for _ in range(20):                    # the signal, if sent, lands within this time
        assert worker.ask(b"again", 20) == b"AGAIN"
    assert worker._proc is first and first.pid == first_pid and first.poll() is None


def test_a_worker_is_still_started_while_the_interpreter_shuts_down(
        worker: Worker, monkeypatch: pytest.MonkeyPatch) -> None:
    """Then no new thread can be had (the starter refuses work): the asking thread starts it."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    from smevals.proc import worker as module

    closed = ThreadPoolExecutor(1)
    closed.shutdown()
    monkeypatch.setitem(module._STARTERS, os.getpid(), closed)
    answers: list[bytes] = []
    thread = threading.Thread(target=lambda: answers.append(worker.ask(b"late", 20)))
    thread.start()
    thread.join()
    assert answers == [b"LATE"]
