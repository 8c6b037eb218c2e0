"""The guardian: a helper process that kills every child tree when smevals dies.

smevals starts one guardian, at its first child, in a session of its own (so Ctrl-C at
the terminal does not reach it), and tells it through a pipe about each child: its tag
before it starts (so a child that runs before smevals could name its pid is known too),
its pid and tag once started, and its end. When the pipe closes because smevals exited, crashed,
or was killed with SIGKILL, the guardian kills every tree still registered. It finds
each tree by the marks `smevals.proc.tree` uses (process group, session, the tag in the
environment, descendants), so a runner's own children die too, not only the runner.

That costs one pipe write per child. A parent-death signal set in each child costs a
fork (instead of vfork) or an extra exec per child, and it reaches only the direct child.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from typing import IO

_lock = threading.Lock()
_state: dict[str, subprocess.Popen[bytes] | None] = {"proc": None}
_broken = threading.Event()


def start() -> int | None:
    """Start the guardian unless it runs already; its pid (None when it cannot run)."""
    with _lock:
        proc = _state["proc"]
        if proc is None and not _broken.is_set():
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-I", "-m", "smevals.proc.guardian"],
                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, start_new_session=True)
            except OSError:
                _broken.set()
                return None
            _state["proc"] = proc
        return None if proc is None else proc.pid


def expect(tag: str) -> None:
    """Say that a child with `tag` is about to start."""
    _send(f"t {tag}\n")


def register(pid: int, tag: str) -> None:
    _send(f"+ {pid} {tag}\n")


def unregister(pid: int) -> None:
    _send(f"- {pid}\n")


def _send(line: str) -> None:
    with _lock:
        proc = _state["proc"]
        if proc is None or proc.stdin is None or _broken.is_set():
            return
        try:
            proc.stdin.write(line.encode())
            proc.stdin.flush()
        except OSError:            # the guardian is gone; smevals goes on without it
            _broken.set()


def watch(lines: IO[bytes]) -> tuple[dict[int, str], set[str]]:
    """Read registrations until the pipe closes; the trees still registered then, and the
    tags of children announced but never registered with a pid."""
    live: dict[int, str] = {}
    expected: set[str] = set()
    for raw in lines:
        op, _, rest = raw.decode("ascii", "replace").strip().partition(" ")
        if op == "t" and rest.isalnum():
            expected.add(rest)
        elif op == "+" and len(rest.split()) == 2:
            pid, tag = rest.split()
            live[int(pid)] = tag
            expected.discard(tag)
        elif op == "-" and rest.isdigit():
            live.pop(int(rest), None)
    return live, expected


def main() -> None:
    live, expected = watch(sys.stdin.buffer)
    if not live and not expected:
        return
    from smevals.proc.tree import Tree, kill_tagged

    for pid, tag in live.items():
        Tree(pid, tag).kill()
    for tag in expected:
        kill_tagged(tag)


if __name__ == "__main__":
    main()
