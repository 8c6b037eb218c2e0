"""Removing what may go: staging leftovers, and Grades a user chose to prune."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

from smevals.store.leftovers import age, local_alive, staging_folders
from smevals.store.locks import is_locked, try_lock, unlock

DEFAULT_GRACE = 3600.0


def stale_staging_reasons(root: Path, grace: float = DEFAULT_GRACE) -> list[tuple[Path, str]]:
    """(folder, why) for every staging folder no live process is writing whose writer is gone
    (on this host) or that has not changed for `grace` seconds."""
    out = []
    for path, writing in staging_folders(root):
        why = "" if writing else why_stale(path, grace)
        if why:
            out.append((path, why))
    return out


def why_stale(path: Path, grace: float) -> str:
    if local_alive(path.name) is False:
        return "its process is gone"
    if age(path) > grace:
        return f"unchanged for more than {grace:g} s"
    return ""


def remove(path: Path) -> bool:
    """Remove a staging folder (holding its lock, so no writer can take it meanwhile) or an
    object folder, read-only files and folders included. A folder whose lock another process
    holds is left alone (False)."""
    handle = try_lock(path) if path.is_dir() else None
    if handle is None and path.is_dir() and is_locked(path):
        return False
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, onerror=_make_writable)
        else:
            path.unlink()
    finally:
        if handle is not None:
            unlock(handle)
    return True


def _make_writable(func: Callable[[str], object], path: str, _exc: object) -> None:
    parent = os.path.dirname(path)
    os.chmod(parent, stat.S_IMODE(os.lstat(parent).st_mode) | stat.S_IWUSR | stat.S_IXUSR)
    func(path)
