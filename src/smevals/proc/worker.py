"""A long-lived child that answers framed requests, each with its own deadline.

For work that must be bounded but is too quick to pay for a process start each time (the
`render_svg` checker's renderer): the child starts once, in its own session, with its
resource limits and parent-death signal set before exec (limits.py), registered with the
guardian; its stdin ends when smevals does. Requests and answers are frames: a 4-byte
big-endian length, then that many bytes. A request that is not answered before its
deadline, or an answer longer than the cap, kills the child's whole tree; the next request
starts a new child. One request at a time per worker (a lock).

The child is started from a thread that lasts as long as smevals: its parent-death signal
is sent when the *thread* that started it ends (prctl(2)), and the job thread that asks
first (`run -g -j 4`) may end while another job thread is waiting on a render.
"""

from __future__ import annotations

import os
import select
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from smevals.proc import OWNED, guardian
from smevals.proc.limits import Limits, before_exec
from smevals.proc.tree import HELPERS, ROOTS, SPAWN_LOCK, Tree, become_subreaper, new_tag

__all__ = ["Worker", "WorkerError", "read_frame", "write_frame"]

T = TypeVar("T")
_STARTERS: dict[int, ThreadPoolExecutor] = {}   # pid -> its lasting thread (a fork makes its own)
_STARTERS_LOCK = threading.Lock()


class WorkerError(Exception):
    """The request got no answer: the child could not start, died, or missed the deadline
    (`timed_out`); the child is gone either way."""

    def __init__(self, reason: str, timed_out: bool = False):
        super().__init__(reason)
        self.reason, self.timed_out = reason, timed_out


class Worker:
    def __init__(self, argv: list[str], env: dict[str, str], limits: Limits,
                 cap: int = 256 << 20, cwd: Path | None = None):
        self.argv, self.env, self.limits, self.cap = argv, env, limits, cap
        self.cwd = cwd
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._tree: Tree | None = None

    def ask(self, request: bytes, timeout: float) -> bytes:
        with self._lock:
            proc = self._proc if self._proc is not None and self._proc.poll() is None \
                else _in_lasting_thread(self._start)
            assert proc.stdin is not None and proc.stdout is not None
            deadline = time.monotonic() + timeout
            try:
                proc.stdin.write(len(request).to_bytes(4, "big") + request)
                proc.stdin.flush()
                size = int.from_bytes(self._read(proc, 4, deadline), "big")
                if size > self.cap:
                    raise WorkerError(f"answered {size} bytes, over the {self.cap}-byte cap")
                return self._read(proc, size, deadline)
            except (OSError, ValueError):
                reason = self._death(proc)
                self._stop()
                raise WorkerError(reason) from None
            except WorkerError:
                self._stop()
                raise

    def close(self) -> None:
        with self._lock:
            self._stop()

    def _start(self) -> subprocess.Popen[bytes]:
        if OWNED["process"]:
            become_subreaper()
            pid = guardian.start()
            if pid is not None:
                with SPAWN_LOCK:
                    HELPERS.add(pid)
        tag, env = new_tag(self.env)
        guardian.expect(tag)
        try:
            with SPAWN_LOCK:
                proc = subprocess.Popen(
                    self.argv, cwd=self.cwd or "/", env=env, stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    start_new_session=True, preexec_fn=before_exec(self.limits))
                ROOTS.add(proc.pid)
        except (OSError, subprocess.SubprocessError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise WorkerError(f"cannot start {self.argv[0]}: {reason}") from None
        guardian.register(proc.pid, tag)
        self._proc, self._tree = proc, Tree(proc.pid, tag)
        return proc

    def _read(self, proc: subprocess.Popen[bytes], size: int, deadline: float) -> bytes:
        assert proc.stdout is not None
        fd, chunks, got = proc.stdout.fileno(), [], 0
        while got < size:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise WorkerError("no answer before the deadline", timed_out=True)
            chunk = os.read(fd, min(size - got, 1 << 20))
            if not chunk:
                raise WorkerError(self._death(proc))
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _death(self, proc: subprocess.Popen[bytes]) -> str:
        try:
            code = proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "the worker stopped answering"
        if code < 0:
            import signal

            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the worker was killed by {name} (out of memory?)"
        return f"the worker exited with status {code}"

    def _stop(self) -> None:
        proc, tree = self._proc, self._tree
        self._proc = self._tree = None
        if proc is None or tree is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        tree.kill()
        proc.wait()
        guardian.unregister(proc.pid)
        with SPAWN_LOCK:
            ROOTS.discard(proc.pid)


def _in_lasting_thread(start: Callable[[], T]) -> T:
    """`start()` called from the main thread, or else from one thread kept for this."""
    if threading.current_thread() is threading.main_thread():
        return start()
    with _STARTERS_LOCK:
        pool = _STARTERS.get(os.getpid())
        if pool is None:
            pool = _STARTERS[os.getpid()] = ThreadPoolExecutor(
                1, thread_name_prefix="smevals-worker-start")
    try:
        future = pool.submit(start)
    except RuntimeError:            # the interpreter is shutting down: no new thread
        return start()
    return future.result()


def read_frame(stream: object) -> bytes | None:
    """The child's side: the next request, or None at the end of stdin."""
    head = _exactly(stream, 4)
    if head is None:
        return None
    return _exactly(stream, int.from_bytes(head, "big"))


def _exactly(stream: object, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))  # type: ignore[attr-defined]
        if not chunk:
            return None
        data += chunk
    return data


def write_frame(stream: object, data: bytes) -> None:
    stream.write(len(data).to_bytes(4, "big") + data)  # type: ignore[attr-defined]
    stream.flush()  # type: ignore[attr-defined]
