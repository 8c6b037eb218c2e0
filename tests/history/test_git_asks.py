"""What `log` and `build --history` ask git over a seven-commit history: a commit's id is
verified at most once per process, and never when `git rev-list` listed it (the answer
about an object id never changes)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.helpers import SMEVALS
from tests.helpers.sevencommits import EVAL, seven_repo

SHIM = """#!/bin/sh
printf '%s\\n' "$*" >> "{log}"
exec {git} "$@"
"""


@pytest.fixture(scope="module")
def seven(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seven_repo(tmp_path_factory)


def asked(repo: Path, tmp_path: Path, *args: str) -> list[str]:
    """The git command lines `smevals ARGS` ran (a fresh cache: nothing known before)."""
    shim, log = tmp_path / "bin", tmp_path / "git.log"
    shim.mkdir()
    git = shutil.which("git")
    assert git is not None
    (shim / "git").write_text(SHIM.format(log=log, git=git))
    (shim / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}",
           "SMEVALS_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([SMEVALS, *args], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return log.read_text().splitlines()


def verified(lines: list[str]) -> Counter[str]:
    return Counter(line.rsplit(" ", 1)[-1] for line in lines if " rev-parse --verify " in line)


def test_log_verifies_only_head(seven: Path, tmp_path: Path) -> None:
    lines = asked(seven, tmp_path, "log", EVAL)
    assert verified(lines) == Counter({"HEAD^{commit}": 1})
    assert sum(" ls-tree -z --full-tree " in line for line in lines) == 7     # once a commit


def test_build_history_verifies_only_head(seven: Path, tmp_path: Path) -> None:
    """No commit id is verified; HEAD, a name that can move, is asked by each of the two
    readers (the site's report and the history) at most."""
    lines = asked(seven, tmp_path, "build", EVAL, "--history", "7", "-o",
                  str(tmp_path / "site"))
    counts = verified(lines)
    assert set(counts) == {"HEAD^{commit}"} and counts["HEAD^{commit}"] <= 2, counts
