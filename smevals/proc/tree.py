"""Find and kill every process a child started, wherever it went.

A child and its descendants are found by three marks, read from /proc:

- its process group and session (the child leads both: it starts with setsid);
- descent by parent pid from the child or from any process already found;
- a random tag in the environment (`_SMEVALS_TREE`), which descendants inherit
  even when they start their own session and are re-parented (`setsid sleep 45 &`).

A process that leaves all three (a new session, re-parented, and a cleared environment)
is not found. Without /proc (macOS) only the process group is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass

TAG_VAR = "_SMEVALS_TREE"
_PROC = "/proc"
_ROUNDS = 20


def new_tag(env: dict[str, str]) -> tuple[str, dict[str, str]]:
    """A fresh tag and `env` with it appended (an outer smevals keeps its own tags)."""
    tag = os.urandom(12).hex()
    outer = env.get(TAG_VAR, "")
    return tag, {**env, TAG_VAR: f"{outer} {tag}".strip()}


@dataclass
class Tree:
    """The processes of one child: its pid (which is also its group and session id)."""

    pid: int
    tag: str

    def members(self) -> set[int]:
        """Live (not zombie) processes of this tree, other than smevals itself."""
        table = _table()
        if table is None:
            return set()
        mark = self.tag.encode()
        found = {pid for pid, (_ppid, pgrp, sid, _state) in table.items()
                 if pid == self.pid or pgrp == self.pid or sid == self.pid
                 or _tagged(pid, mark)}
        found |= _descendants(table, found | {self.pid})
        found.discard(os.getpid())
        return {pid for pid in found if pid in table and table[pid][3] not in "ZX"}

    def signal(self, sig: int) -> None:
        """Send `sig` to the process group and to every member found."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)
        for pid in self.members():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)

    def kill(self) -> int:
        """SIGKILL the whole tree until no member is left; how many were found."""
        killed: set[int] = set()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        for _ in range(_ROUNDS):
            left = self.members()
            if not left:
                break
            killed |= left
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        return len(killed)


def _table() -> dict[int, tuple[int, int, int, str]] | None:
    """pid -> (ppid, process group, session, state) of every process, or None without /proc."""
    try:
        names = os.listdir(_PROC)
    except OSError:
        return None
    table = {}
    for name in names:
        if name.isdigit():
            row = _stat(name)
            if row is not None:
                table[int(name)] = row
    return table


def _stat(pid: str) -> tuple[int, int, int, str] | None:
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    if len(fields) < 4:
        return None
    return int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode("ascii", "replace")


def _tagged(pid: int, mark: bytes) -> bool:
    try:
        with open(f"{_PROC}/{pid}/environ", "rb") as fh:
            return mark in fh.read()
    except OSError:
        return False


def _descendants(table: dict[int, tuple[int, int, int, str]], roots: set[int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, _pgrp, _sid, _state) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for kid in children.get(todo.pop(), ()):
            if kid not in found and kid not in roots:
                found.add(kid)
                todo.append(kid)
    return found
