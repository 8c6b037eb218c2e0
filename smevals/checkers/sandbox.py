"""Run one program with limits: stdin closed, its own process group, a wall-clock
timeout, RLIMIT_CPU and RLIMIT_AS, and a cap on each captured stream.

The whole process group is killed on timeout, when a stream passes its cap, and
at the end (so no background child outlives the check). POSIX only.
"""

from __future__ import annotations

import contextlib
import math
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

_SLICE = 0.1
_GRACE = 0.5


@dataclass
class Outcome:
    exit_code: int | None = None
    timed_out: bool = False
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    over_cap: list[str] = field(default_factory=list)


def _limits(cpu_seconds: int, memory_bytes: int) -> Callable[[], None]:
    """Runs in the child before exec; never asks for more than the current hard limit."""

    def lower(kind: int, soft: int, hard: int) -> None:
        import resource

        ceiling = resource.getrlimit(kind)[1]
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        resource.setrlimit(kind, (soft, hard))

    def apply() -> None:
        import resource

        lower(resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1)
        lower(resource.RLIMIT_AS, memory_bytes, memory_bytes)
        lower(resource.RLIMIT_CORE, 0, 0)

    return apply


def run_limited(argv: list[str], cwd: Path, timeout: float, memory_mb: int, cap: int) -> Outcome:
    """Run ``argv`` in ``cwd``; never raises for the program's own failures."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_limits(math.ceil(timeout) + 1, memory_mb * 1024 * 1024),
    )
    outcome = Outcome()
    deadline = time.monotonic() + timeout
    try:
        _pump(proc, outcome, deadline, cap)
        outcome.exit_code = _wait(proc, outcome, deadline)
    finally:
        _kill_group(proc)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    return outcome


def _pump(proc: subprocess.Popen[bytes], outcome: Outcome, deadline: float, cap: int) -> None:
    """Read both pipes until EOF, the deadline, or a stream passing its cap.

    Once the program itself has exited, a background child still holding a pipe
    gets ``_GRACE`` seconds before reading stops (the group is killed afterwards).
    """
    buffers = {"stdout": outcome.stdout, "stderr": outcome.stderr}
    exited_at: float | None = None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ, "stdout")  # type: ignore[arg-type]
        sel.register(proc.stderr, selectors.EVENT_READ, "stderr")  # type: ignore[arg-type]
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                outcome.timed_out = True
                return
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > _GRACE:
                return
            for key, _ in sel.select(min(deadline - now, _SLICE)):
                if not _read(key, buffers, outcome, cap):
                    sel.unregister(key.fileobj)
                if outcome.over_cap:
                    return


def _read(
    key: selectors.SelectorKey, buffers: dict[str, bytearray], outcome: Outcome, cap: int
) -> bool:
    """Read one chunk into its buffer, keeping at most ``cap`` bytes; False at EOF."""
    chunk = os.read(key.fd, 65536)
    if not chunk:
        return False
    buffer = buffers[key.data]
    room = cap - len(buffer)
    buffer += chunk[:room]
    if len(chunk) > room:
        outcome.over_cap.append(key.data)
    return True


def _wait(proc: subprocess.Popen[bytes], outcome: Outcome, deadline: float) -> int | None:
    if outcome.timed_out or outcome.over_cap:
        _kill_group(proc)
        return proc.wait()
    try:
        return proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        outcome.timed_out = True
        _kill_group(proc)
        return proc.wait()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
