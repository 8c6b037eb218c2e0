"""Looking at staging folders: whose they are, and whether their writer is still at work."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import NamedTuple

from smevals.store.folders import open_folder
from smevals.store.layout import STAGING
from smevals.store.locks import is_locked
from smevals.store.write import host_name


class Owner(NamedTuple):
    kind: str
    host: str
    pid: int


def owner(name: str) -> Owner | None:
    """The writer named in `<kind>-<host>-<pid>-<random>`, or None for another name."""
    parts = name.rsplit("-", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return None
    kind, _, host = parts[0].partition("-")
    return Owner(kind, host, int(parts[1])) if host else None


def staging_folders(root: Path) -> list[tuple[Path, bool]]:
    """(folder, a live process is writing it) for every entry of `<root>/.staging` but
    hidden ones (its `.gitignore`). NotAFolder when `.staging` is a link (or a file):
    nothing is ever looked at, or removed, through it."""
    base = root / STAGING
    try:
        fd = open_folder(root, STAGING, create=False)
    except FileNotFoundError:
        return []
    try:
        names = sorted(n for n in os.listdir(fd) if not n.startswith("."))
    finally:
        os.close(fd)
    used = working_dirs() if names else set()
    return [(base / n, writing(base / n) or in_use(base / n, used)) for n in names]


def working_dirs() -> set[str]:
    """The working folder of every process this one can see (Linux: /proc/<pid>/cwd). A
    runner or checker runs in its staging folder, so a folder some process works in is
    in use even when the smevals process that made it is gone."""
    out: set[str] = set()
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return out
    for pid in pids:
        try:
            out.add(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            continue
    return out


def in_use(folder: Path, used: set[str]) -> bool:
    """Whether a process works in `folder` or below it."""
    real = os.path.realpath(folder)
    return any(cwd == real or cwd.startswith(real + os.sep) for cwd in used)


YOUNG = 60.0      # seconds a new, not yet locked folder of a live local process is spared


def writing(folder: Path) -> bool:
    """Whether a live process is writing the folder: it holds the folder's lock; or, where
    locks cannot tell or the folder was made a moment ago, the process named in it still
    runs on this host."""
    locked = is_locked(folder)
    if locked:
        return True
    if not local_alive(folder.name):
        return False
    return locked is None or age(folder) < YOUNG


def local_alive(name: str) -> bool | None:
    """Whether the process named in a staging folder runs (None: it ran on another host)."""
    who = owner(name)
    if who is None:
        return False
    if who.host != host_name():
        return None
    return pid_alive(who.pid)


def age(folder: Path) -> float:
    """Seconds since the folder last changed."""
    try:
        info = os.lstat(folder)
    except OSError:
        return 0.0
    return time.time() - max(info.st_mtime, info.st_ctime)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True
