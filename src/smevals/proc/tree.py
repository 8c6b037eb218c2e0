"""Find and kill every process a child started, wherever it went.

On Linux smevals makes itself a child subreaper (PR_SET_CHILD_SUBREAPER): a process whose
parent dies is re-parented to smevals instead of init, so every descendant of a child stays
in smevals' own process tree, read from /proc/PID/task/TID/children without scanning the
system. A child's processes are its descendants, plus the re-parented ones (smevals'
children that are not a child it started) that carry one of its marks:

- its process group or session (the child leads both: it starts with setsid);
- a random tag in the environment (`_SMEVALS_TREE`), which descendants inherit even when
  they start their own session (`setsid sleep 45 &`);

and their descendants. While no other child runs, every re-parented process outside smevals'
own session started after the child counts too (all of them came from children).
Re-parented processes that end become smevals' zombies, reaped here. A process in the
middle of an exec shows an empty environment for a moment; an empty one is read again until
it shows the new program's (`_tagged`), or a missed tag would let it live.
Without the subreaper (or the children files) every process in /proc is read instead, with
the same marks. A process that clears its environment, leaves the session and whose parent
died is missed there, and with the subreaper while other children run. Without /proc
(macOS) only the process group is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

TAG_VAR = "_SMEVALS_TREE"
_PROC = "/proc"
_ROUNDS = 20
_PR_SET_CHILD_SUBREAPER = 36

SPAWN_LOCK = threading.Lock()     # held while a child is started and registered in ROOTS
ROOTS: set[int] = set()           # pids of the children started through smevals.proc
HELPERS: set[int] = set()         # smevals' own helpers (the guardian): nobody's orphans
_subreaper: bool | None = None

Stat = tuple[int, int, int, str]  # ppid, process group, session, state


def new_tag(env: dict[str, str]) -> tuple[str, dict[str, str]]:
    """A fresh tag and `env` with it appended (an outer smevals keeps its own tags)."""
    tag = os.urandom(12).hex()
    outer = env.get(TAG_VAR, "")
    return tag, {**env, TAG_VAR: f"{outer} {tag}".strip()}


def become_subreaper() -> None:
    """Make smevals the reaper of its orphaned descendants (once; Linux only)."""
    global _subreaper
    if _subreaper is not None:
        return
    from smevals.proc.limits import prctl

    fn = prctl()
    tid = threading.get_native_id()
    _subreaper = (fn is not None and fn(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
                  and os.path.exists(f"{_PROC}/{os.getpid()}/task/{tid}/children"))


@dataclass
class Tree:
    """The processes of one child: its pid (which is also its group and session id)."""

    pid: int
    tag: str
    started: int = 0        # the child's start time (clock ticks after boot), see _near

    def __post_init__(self) -> None:
        self.started = self.started or _start_time(self.pid) or 0

    def members(self) -> set[int]:
        """Live (not zombie) processes of this tree, never smevals itself."""
        found = self._near() if _subreaper else self._scan()
        found.discard(os.getpid())
        return {pid for pid in found if _state(pid) not in ("Z", "X", "")}

    def signal(self, sig: int) -> None:
        """Send `sig` to the process group and to every member found."""
        _kill_group(self.pid, sig)
        for pid in self.members():
            _kill(pid, sig)

    def kill(self) -> int:
        """SIGKILL the whole tree until no member is left; how many were found besides
        the child itself."""
        killed: set[int] = set()
        _kill_group(self.pid, signal.SIGKILL)
        for _ in range(_ROUNDS):
            left = self.members()
            if not left:
                break
            killed |= left
            for pid in left:
                _kill(pid, signal.SIGKILL)
        _reap_killed(killed - {self.pid})
        reap_orphans()
        return len(killed - {self.pid})

    def _marked(self, pid: int, row: Stat | None) -> bool:
        return row is not None and (self.pid in (row[1], row[2]) or _tagged(pid, self.tag))

    def _near(self) -> set[int]:
        """Descendants of the child, and re-parented processes with its marks."""
        found = {self.pid} | _descendants_of(self.pid)
        with SPAWN_LOCK:
            orphans = _children_of(os.getpid()) - ROOTS - HELPERS
            alone = len(ROOTS - {self.pid}) == 0
        session = os.getsid(0)
        for pid in orphans:
            row = _stat(pid)
            if self._marked(pid, row) or (alone and row is not None and row[2] != session
                                          and (_start_time(pid) or 0) >= self.started):
                found |= {pid} | _descendants_of(pid)
        return found

    def _scan(self) -> set[int]:
        """Every process in /proc with the child's marks, and their descendants."""
        table = _table()
        if table is None:
            return set()
        found = {pid for pid, row in table.items() if pid == self.pid or self._marked(pid, row)}
        return found | _descendants(table, found | {self.pid})


def kill_tagged(tag: str) -> None:
    """SIGKILL every process whose environment holds `tag`, and their descendants, until
    none is left (a child whose pid was never known: see guardian.py)."""
    for _ in range(_ROUNDS):
        table = _table()
        found = {pid for pid in table or {} if _tagged(pid, tag)} - {os.getpid()}
        found |= _descendants(table or {}, found)
        if not found:
            return
        for pid in found:
            _kill(pid, signal.SIGKILL)


def reap_orphans() -> None:
    """Reap re-parented processes that ended (smevals' zombies it did not start as children
    through this module). Other subprocesses of smevals stay in smevals' session, so a zombie
    in another session is an orphan of a child's tree."""
    if not _subreaper:
        return
    me, session = os.getpid(), os.getsid(0)
    with SPAWN_LOCK:
        for pid in _children_of(me) - ROOTS - HELPERS:
            row = _stat(pid)
            if row is not None and row[3] == "Z" and row[2] != session:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)


def _reap_killed(pids: set[int], patience: float = 0.5) -> None:
    """Reap the killed processes that were re-parented to smevals, once they have died."""
    me = os.getpid()
    with SPAWN_LOCK:
        mine = {pid for pid in pids - ROOTS if (row := _stat(pid)) is not None and row[0] == me}
    end = time.monotonic() + patience
    while mine and time.monotonic() < end:
        for pid in list(mine):
            try:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    mine.discard(pid)
            except ChildProcessError:
                mine.discard(pid)
        if mine:
            time.sleep(0.002)


def _kill(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _read(path: str, limit: int = 1 << 20) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def _children_of(pid: int) -> set[int]:
    """Children of every thread of `pid`."""
    try:
        tids = os.listdir(f"{_PROC}/{pid}/task")
    except OSError:
        return set()
    kids: set[int] = set()
    for tid in tids:
        data = _read(f"{_PROC}/{pid}/task/{tid}/children")
        if data:
            kids.update(int(x) for x in data.split())
    return kids


def _descendants_of(pid: int) -> set[int]:
    found: set[int] = set()
    todo = [pid]
    while todo:
        for kid in _children_of(todo.pop()):
            if kid not in found:
                found.add(kid)
                todo.append(kid)
    return found


def _stat(pid: int | str) -> Stat | None:
    data = _read(f"{_PROC}/{pid}/stat", 4096)
    if not data:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    if len(fields) < 4:
        return None
    return int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode("ascii", "replace")


def _start_time(pid: int) -> int | None:
    data = _read(f"{_PROC}/{pid}/stat", 4096)
    fields = data[data.rfind(b")") + 2:].split() if data else []
    return int(fields[19]) if len(fields) > 19 else None


_PF_KTHREAD = 0x00200000


def _kernel_thread(pid: int) -> bool:
    """A kernel thread (no environment, never a child's): the flags of /proc/PID/stat."""
    data = _read(f"{_PROC}/{pid}/stat", 4096)
    fields = data[data.rfind(b")") + 2:].split() if data else []
    return len(fields) > 6 and bool(int(fields[6]) & _PF_KTHREAD)


def _state(pid: int) -> str:
    row = _stat(pid)
    return "" if row is None else row[3]


def _tagged(pid: int, tag: str) -> bool:
    """Whether the environment of `pid` holds `tag`. In the middle of an exec a process shows
    an empty environment for a moment (the new program's is not set up yet; a detached
    `setsid sh -c 'exec sleep 45'` execs three times as it starts), so an empty one is read
    again until it is not (docs/reliability.md, "The signal window")."""
    data = _read(f"{_PROC}/{pid}/environ")
    if data == b"":
        data = _settled_environ(pid)
    return data is not None and tag.encode() in data


_EXEC_WAIT = 2.0                  # seconds an empty environment is read again
_BLANK: set[tuple[int, int]] = set()   # (pid, start time): read again that long, still empty


def _settled_environ(pid: int) -> bytes | None:
    """The environment of `pid` once it shows one: read again every 2 ms for up to
    _EXEC_WAIT seconds while it is empty and the process lives. A process that cleared its
    environment (`env -i`) stays empty: it is waited for once."""
    key = (pid, _start_time(pid) or 0)
    if key in _BLANK or _kernel_thread(pid):
        return b""
    end = time.monotonic() + _EXEC_WAIT
    data: bytes | None = b""
    while data == b"" and time.monotonic() < end:
        if _state(pid) in ("Z", "X", ""):
            return None
        time.sleep(0.002)
        data = _read(f"{_PROC}/{pid}/environ")
    if data == b"":
        if len(_BLANK) > 4096:
            _BLANK.clear()
        _BLANK.add(key)
    return data


def _table() -> dict[int, Stat] | None:
    """pid -> stat row of every process, or None without /proc."""
    try:
        names = os.listdir(_PROC)
    except OSError:
        return None
    rows = ((int(name), _stat(name)) for name in names if name.isdigit())
    return {pid: row for pid, row in rows if row is not None}


def _descendants(table: dict[int, Stat], roots: Iterable[int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, row in table.items():
        children.setdefault(row[0], []).append(pid)
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for kid in children.get(todo.pop(), ()):
            if kid not in found:
                found.add(kid)
                todo.append(kid)
    return found
