"""Where a Run came from: smevals, Python, platform, and the Eval's git commit."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from smevals.version import __version__


def provenance(eval_dir: Path, store_root: Path) -> dict[str, Any]:
    return {
        "smevals": __version__,
        "python": platform.python_version(),
        "platform": f"{sys.platform}-{platform.machine()}",
        "git": git_state(eval_dir, store_root),
    }


def git_state(eval_dir: Path, store_root: Path) -> dict[str, Any] | None:
    """The commit of the Eval's repository, and whether the Eval had uncommitted changes
    (the results store itself is left out)."""
    head = _git(eval_dir, "rev-parse", "HEAD")
    if head is None:
        return None
    exclude = []
    try:
        rel = store_root.absolute().relative_to(eval_dir.absolute())
        exclude = [f":(exclude){rel.as_posix()}"]
    except ValueError:
        pass
    status = _git(eval_dir, "status", "--porcelain", "--", ".", *exclude)
    return {"commit": head.strip(), "dirty": bool(status and status.strip())}


def _git(cwd: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False,
                              timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None
