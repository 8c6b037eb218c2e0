"""Processes a test started, and those they started: gone yet, and the pid a runner left."""

from __future__ import annotations

import os
import time
from pathlib import Path


def gone(pid: int, within: float = 3.0) -> bool:
    """Whether `pid` is dead (or a zombie) within `within` seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (ProcessLookupError, FileNotFoundError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


def marker_pid(folder: Path, name: str = "sleeper.pid") -> int:
    end = time.monotonic() + 20          # generous: a loaded machine starts smevals slowly
    while not (folder / name).is_file() or not (folder / name).read_text().strip():
        assert time.monotonic() < end, f"{name} never appeared"
        time.sleep(0.05)
    return int((folder / name).read_text())
