"""Removing what may go: staging leftovers, and Grades a user chose to prune."""

from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path

from smevals.store.objects import STAGING

DEFAULT_GRACE = 3600.0


def stale_staging(root: Path, grace: float = DEFAULT_GRACE) -> list[Path]:
    """Staging folders of processes that are gone (on this host) or older than `grace` seconds."""
    folder = root / STAGING
    if not folder.is_dir():
        return []
    now = time.time()
    out = []
    for entry in sorted(folder.iterdir()):
        if not _alive(entry.name) or now - entry.stat().st_mtime > grace:
            out.append(entry)
    return out


def _alive(name: str) -> bool:
    """Whether the process that made staging folder `name` (<kind>-<host>-<pid>-<rand>) lives."""
    parts = name.rsplit("-", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    host = parts[0].split("-", 1)[-1]
    if host != socket.gethostname():
        return True          # another machine's: only the grace period can tell
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove(path: Path) -> None:
    shutil.rmtree(path)
