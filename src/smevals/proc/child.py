"""Run one child to its end or its deadline, then kill whatever it left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from smevals.phases import phase
from smevals.proc import OWNED, guardian
from smevals.proc.limits import Limits, launcher
from smevals.proc.signals import deferred
from smevals.proc.stream import Reader
from smevals.proc.tree import HELPERS, ROOTS, SPAWN_LOCK, Tree, become_subreaper, new_tag

__all__ = ["Captured", "Children", "Limits", "Result", "Spec", "run_child"]

_SLICE = 0.05
_GRACE = 0.2        # after the child exits, how long the streams may take to close
_DRAIN = 1.0        # after the tree is killed, how long to read what is left in the pipes


@dataclass(frozen=True)
class Spec:
    argv: list[str]
    cwd: Path
    env: dict[str, str]
    timeout: float | None = None
    cap: int = 1 << 20                  # bytes kept of each stream
    limits: Limits = field(default_factory=Limits)
    stop_at_cap: bool = False           # kill the child once a stream passes the cap
    idle: float | None = None           # kill it after this many seconds without activity
    watch: Callable[[bytes], bool] | None = None    # sees stdout's chunks: activity? (stream.py)
    prepare: Callable[[], None] | None = None   # run in the child after its limits, before exec


@dataclass(frozen=True)
class Captured:
    data: bytes
    total: int                          # bytes the child wrote (read and counted)

    @property
    def truncated(self) -> bool:
        return self.total > len(self.data)


@dataclass(frozen=True)
class Result:
    exit_code: int | None               # negative: killed by that signal; None: not started
    stdout: Captured
    stderr: Captured
    seconds: float                      # from launch until the tree was dead
    timed_out: bool = False
    over_cap: bool = False              # stopped because a stream passed the cap
    error: str | None = None            # why it could not start
    leftovers: int = 0                  # other processes of its tree found at the end, killed
    idle: bool = False                  # stopped after `Spec.idle` seconds without activity

    @property
    def signal_name(self) -> str | None:
        code = self.exit_code
        if code is None or code >= 0:
            return None
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"


class Children:
    """The live children of one command, so Ctrl-C or SIGTERM can end them all at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[int, Tree] = {}
        self.cancelled = threading.Event()

    def add(self, tree: Tree) -> None:
        with self._lock:
            self._live[tree.pid] = tree
        if self.cancelled.is_set():
            tree.signal(signal.SIGTERM)

    def remove(self, tree: Tree) -> None:
        with self._lock:
            self._live.pop(tree.pid, None)

    def cancel(self, grace: float = 2.0) -> None:
        """SIGTERM every tree, then SIGKILL what is left after `grace` seconds."""
        self.cancelled.set()
        for tree in self._trees():
            tree.signal(signal.SIGTERM)
        end = time.monotonic() + grace
        while time.monotonic() < end and self._trees():
            time.sleep(0.05)
        for tree in self._trees():
            tree.kill()

    def _trees(self) -> list[Tree]:
        with self._lock:
            return list(self._live.values())


def run_child(spec: Spec, children: Children | None = None) -> Result:
    """Run `spec.argv`; never raises for the child's own failures. An interrupt (Ctrl-C,
    SIGTERM) never falls between the start of the child and its registration with the
    guardian, and one that stops the supervision half-way kills the whole tree again."""
    start = time.monotonic()
    tag, env = new_tag(spec.env)
    _prepare()
    with deferred(), phase("child start"):
        try:
            proc, tree = _start(spec, env, tag, children)
        except (OSError, subprocess.SubprocessError) as exc:
            empty = Captured(b"", 0)
            reason = getattr(exc, "strerror", None) or str(exc)
            return Result(None, empty, empty, time.monotonic() - start,
                          error=f"cannot start {spec.argv[0]}: {reason}")
    try:
        with phase("child wait"):
            return _supervise(proc, tree, spec, start)
    except BaseException:
        with deferred():
            tree.kill()
        raise
    finally:
        with deferred():
            guardian.unregister(proc.pid)
            if children is not None:
                children.remove(tree)


def _start(spec: Spec, env: dict[str, str], tag: str,
           children: Children | None) -> tuple[subprocess.Popen[bytes], Tree]:
    guardian.expect(tag)
    with SPAWN_LOCK:
        proc = subprocess.Popen(
            spec.argv, cwd=spec.cwd, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=launcher(spec.limits, spec.prepare))
        ROOTS.add(proc.pid)
    guardian.register(proc.pid, tag)
    tree = Tree(proc.pid, tag)
    if children is not None:
        children.add(tree)
    return proc, tree


def _prepare() -> None:
    """Once per process, when smevals owns it: become a subreaper, start the guardian."""
    if not OWNED["process"]:
        return
    become_subreaper()
    pid = guardian.start()
    if pid is not None:
        with SPAWN_LOCK:
            HELPERS.add(pid)


def _supervise(proc: subprocess.Popen[bytes], tree: Tree, spec: Spec, start: float) -> Result:
    assert proc.stdout is not None and proc.stderr is not None
    reader = Reader({"stdout": proc.stdout, "stderr": proc.stderr}, spec.cap, proc.pid,
                    spec.watch)
    deadline = None if spec.timeout is None else start + spec.timeout
    leftovers = 0
    try:
        why = _watch(proc, reader, deadline, spec.stop_at_cap, spec.idle)
        if why == "exit":
            reader.read_until_eof(_bounded(_GRACE, deadline))
        with phase("child tree kill"):
            leftovers = tree.kill()
        code = proc.wait()
        reader.read_until_eof(_DRAIN)
    finally:
        reader.close()
        proc.stdout.close()
        proc.stderr.close()
        if proc.returncode is None:
            tree.kill()
            proc.wait()
        with SPAWN_LOCK:
            ROOTS.discard(proc.pid)
    out, err = (Captured(bytes(reader.kept[n]), reader.total[n]) for n in ("stdout", "stderr"))
    return Result(code, out, err, time.monotonic() - start, timed_out=why == "timeout",
                  over_cap=why == "cap", leftovers=leftovers, idle=why == "idle")


def _watch(proc: subprocess.Popen[bytes], reader: Reader, deadline: float | None,
           stop_at_cap: bool, idle: float | None = None) -> str:
    """Read until the child exits ("exit"), the deadline ("timeout"), the cap ("cap") or
    `idle` seconds without activity on stdout ("idle")."""
    while True:
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            return "timeout"
        if idle is not None and now - reader.active >= idle:
            return "idle"
        if _exited(proc):
            return "exit"
        if stop_at_cap and reader.over_cap:
            return "cap"
        reader.read_for(_SLICE if deadline is None else min(_SLICE, deadline - now))


def _bounded(seconds: float, deadline: float | None) -> float:
    return seconds if deadline is None else max(0.0, min(seconds, deadline - time.monotonic()))


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the child has exited, without reaping it: while it is a zombie its pid, group
    and session id cannot be reused, so killing them later cannot hit another process."""
    if not hasattr(os, "waitid") or not hasattr(os, "WNOWAIT"):
        return proc.poll() is not None
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True
