"""git for the tests: a fixed author and committer, no user or system configuration."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """`git -C repo ARGS` (raises on failure); its stdout. `env` adds to (or overrides) the
    fixed author of GIT_ENV, e.g. fixed dates."""
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV, **(env or {})}, check=True)
    return proc.stdout
