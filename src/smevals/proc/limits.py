"""What a child sets between fork and exec: resource limits and its parent-death signal.

Only a child with limits (`match_output`) runs a function between fork and exec; that
makes subprocess fork smevals instead of using vfork, about 5 ms more per child, so the
others run none and rely on the guardian (guardian.py) to die with smevals. (A sandbox
that dies with its parent by itself, bwrap, gets its limits from `prlimit_prefix`
instead.) The function sets the limits and, on Linux, the parent-death signal
(PR_SET_PDEATHSIG). Everything it
uses is computed in the parent before the fork: it only calls functions bound beforehand
(setrlimit, prctl through ctypes, getppid, _exit) with arguments built beforehand: no
import, no lock, nothing another thread could hold.
"""

from __future__ import annotations

import functools
import os
import resource
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Limits:
    """Resource limits for one child; None leaves a limit as it is."""

    cpu_seconds: int | None = None
    memory_bytes: int | None = None      # RLIMIT_AS
    file_bytes: int | None = None        # RLIMIT_FSIZE: the largest file it may write
    processes: int | None = None         # processes it may add (RLIMIT_NPROC, see below)
    core_dumps: bool = True              # False: RLIMIT_CORE 0

    @property
    def none(self) -> bool:
        return self == Limits()


def _pairs(limits: Limits) -> list[tuple[int, tuple[int, int]]]:
    """(kind, (soft, hard)) to set, never above the current hard limit."""
    wanted: list[tuple[int, int, int]] = []
    if not limits.core_dumps:
        wanted.append((resource.RLIMIT_CORE, 0, 0))
    if limits.cpu_seconds is not None:
        wanted.append((resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1))
    if limits.memory_bytes is not None:
        wanted.append((resource.RLIMIT_AS, limits.memory_bytes, limits.memory_bytes))
    if limits.file_bytes is not None:
        wanted.append((resource.RLIMIT_FSIZE, limits.file_bytes, limits.file_bytes))
    if limits.processes is not None:
        # RLIMIT_NPROC counts every process of the user, so allow the ones already running.
        total = _user_processes() + limits.processes
        wanted.append((resource.RLIMIT_NPROC, total, total))
    pairs = []
    for kind, soft, hard in wanted:
        ceiling = resource.getrlimit(kind)[1]
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        pairs.append((kind, (soft, hard)))
    return pairs


def _user_processes() -> int:
    """How many processes (threads count too) the real user runs now; 0 without /proc."""
    uid, count = os.getuid(), 0
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0
    for name in names:
        if name.isdigit():
            try:
                st = os.stat(f"/proc/{name}")
                if st.st_uid == uid:
                    count += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                continue
    return count


_OPTION = {resource.RLIMIT_CORE: "core", resource.RLIMIT_CPU: "cpu", resource.RLIMIT_AS: "as",
           resource.RLIMIT_FSIZE: "fsize", resource.RLIMIT_NPROC: "nproc"}
_SYSTEM = "/usr/bin:/bin:/usr/sbin:/sbin"


def prlimit_prefix(limits: Limits) -> list[str] | None:
    """`limits` as a prefix of a command: util-linux's `prlimit`, which sets them on itself
    and then execs the command, so that subprocess can use vfork. Forking smevals instead
    costs several milliseconds of page tables (about 4 ms for a `run` process, 20 ms for
    one of 300 MB) where the exec costs under one. It sets no parent-death signal: for
    programs that set their own (bwrap's --die-with-parent). None without prlimit in the
    system's folders."""
    path = _prlimit()
    if path is None:
        return None
    return [path, *(f"--{_OPTION[kind]}={_value(soft)}:{_value(hard)}"
                    for kind, (soft, hard) in _pairs(limits)), "--"]


@functools.cache
def _prlimit() -> str | None:
    import shutil

    return shutil.which("prlimit", path=_SYSTEM) if sys.platform.startswith("linux") else None


def _value(limit: int) -> str:
    return "unlimited" if limit == resource.RLIM_INFINITY else str(limit)


@functools.cache
def prctl() -> Callable[..., int] | None:
    """libc's prctl on Linux, bound once (in the parent), else None."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        fn = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                   ctypes.c_ulong]
    fn.restype = ctypes.c_int
    return fn


def launcher(limits: Limits,
             then: Callable[[], None] | None = None) -> Callable[[], None] | None:
    """The function to run in the child before exec (the limits, then `then`); None when
    there is nothing to do, so that subprocess can use vfork (no Python code between fork
    and exec)."""
    return None if limits.none and then is None else before_exec(limits, then)


def before_exec(limits: Limits, then: Callable[[], None] | None = None) -> Callable[[], None]:
    """The function subprocess calls in the child after fork, before exec: the limits,
    the parent-death signal, then `then` (built the same way: see smevals.proc.mountns)."""
    pairs = _pairs(limits)
    setrlimit, getppid, _exit = resource.setrlimit, os.getppid, os._exit
    call = prctl()
    parent = os.getpid()
    deathsig = int(signal.SIGKILL)

    def child() -> None:
        for kind, pair in pairs:
            setrlimit(kind, pair)
        if call is not None:
            call(_PR_SET_PDEATHSIG, deathsig, 0, 0, 0)
            if getppid() != parent:      # the parent died before prctl took effect
                _exit(125)
        if then is not None:
            then()

    return child
