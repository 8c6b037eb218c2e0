"""Where a command's own time goes, phase by phase (`SMEVALS_PHASES=FILE`; bench/overhead.py).

The code marks its phases (`with phase("seal"):`). With `SMEVALS_PHASES` unset, a mark is
one function call that returns a shared do-nothing context. With it set to a file name,
each mark adds its wall and CPU time (the thread's own, `time.thread_time`) to the phase's
total, less the time of the phases marked inside it, so the phases of a thread never
overlap and add up to the time they cover; work done in a pool of threads is summed over
the threads. At exit the process appends one JSON line to the file: every phase's count,
wall and CPU seconds, the CPU the process and its children used, and the CPU used before
the command started (`started()`: Python and the imports).
"""

from __future__ import annotations

import os
import threading
import time
from types import TracebackType

_FILE = os.environ.get("SMEVALS_PHASES") or None

_lock = threading.Lock()
_totals: dict[str, list[float]] = {}       # name -> [count, wall, cpu]
_local = threading.local()
_start_cpu: list[float] = []


class _Off:
    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None


_OFF = _Off()


class _On:
    __slots__ = ("name", "wall", "cpu", "inner_wall", "inner_cpu")

    def __init__(self, name: str):
        self.name = name
        self.inner_wall = self.inner_cpu = 0.0

    def __enter__(self) -> None:
        stack = _stack()
        stack.append(self)
        self.wall, self.cpu = time.perf_counter(), time.thread_time()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        wall, cpu = time.perf_counter() - self.wall, time.thread_time() - self.cpu
        stack = _stack()
        stack.pop()
        if stack:
            stack[-1].inner_wall += wall
            stack[-1].inner_cpu += cpu
        with _lock:
            total = _totals.setdefault(self.name, [0, 0.0, 0.0])
            total[0] += 1
            total[1] += wall - self.inner_wall
            total[2] += cpu - self.inner_cpu


def _stack() -> list[_On]:
    stack: list[_On] | None = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def phase(name: str) -> _On | _Off:
    """A context that adds the time spent in it to the phase `name` (when timing is on)."""
    return _OFF if _FILE is None else _On(name)


def enabled() -> bool:
    return _FILE is not None


def started() -> None:
    """Note that the command itself starts now: the CPU used so far is start-up."""
    if _FILE is None or _start_cpu:
        return
    import atexit
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    _start_cpu.append(usage.ru_utime + usage.ru_stime)
    atexit.register(_write)


def _write() -> None:
    import json
    import resource
    import sys

    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    with _lock:
        phases = {name: list(total) for name, total in sorted(_totals.items())}
    line = {"argv": sys.argv[1:], "startup_cpu": _start_cpu[0] if _start_cpu else 0.0,
            "cpu": me.ru_utime + me.ru_stime, "children_cpu": kids.ru_utime + kids.ru_stime,
            "phases": phases}
    assert _FILE is not None
    try:
        with open(_FILE, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")
    except OSError:
        pass
