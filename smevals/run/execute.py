"""Launch one runner program: no arguments, stdin closed, its own process group, a timeout."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Finished:
    stdout: bytes
    stderr: bytes
    exit_code: int | None
    failure: str | None        # None, "exit", "timeout", "signal", "launch"
    detail: str
    seconds: float


class ProcessGroups:
    """Live process groups, so that Ctrl-C or SIGTERM can end every runner at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[int, subprocess.Popen[bytes]] = {}
        self.cancelled = threading.Event()

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._live[proc.pid] = proc
        if self.cancelled.is_set():
            kill_group(proc.pid, signal.SIGTERM)

    def remove(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._live.pop(proc.pid, None)

    def cancel(self, grace: float = 2.0) -> None:
        """Stop everything: SIGTERM each group, then SIGKILL what is left after `grace`."""
        self.cancelled.set()
        with self._lock:
            pids = list(self._live)
        for pid in pids:
            kill_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and self._any_alive():
            time.sleep(0.05)
        with self._lock:
            pids = list(self._live)
        for pid in pids:
            kill_group(pid, signal.SIGKILL)

    def _any_alive(self) -> bool:
        with self._lock:
            return any(p.poll() is None for p in self._live.values())


def kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def launch(argv: list[str], cwd: Path, env: dict[str, str], timeout: float | None,
           groups: ProcessGroups) -> Finished:
    start = time.monotonic()
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        return Finished(b"", b"", None, "launch", f"cannot start {argv[0]}: {exc.strerror or exc}",
                        time.monotonic() - start)
    groups.add(proc)
    try:
        return _wait(proc, timeout, start)
    finally:
        groups.remove(proc)


def _wait(proc: subprocess.Popen[bytes], timeout: float | None, start: float) -> Finished:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return Finished(out, err, None, "timeout", f"timed out after {timeout:g}s; the runner's "
                        "process group was killed", time.monotonic() - start)
    kill_group(proc.pid, signal.SIGKILL)     # children left behind in the group
    code = proc.returncode
    seconds = time.monotonic() - start
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
        return Finished(out, err, code, "signal", f"killed by signal {name}", seconds)
    if code != 0:
        return Finished(out, err, code, "exit", f"exited with status {code}", seconds)
    return Finished(out, err, 0, None, "", seconds)
