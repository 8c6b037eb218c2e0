"""bench/report.py --keep DIR: a store built once is timed again without a rebuild, also
when it was built with --no-diff (no git history: the report commands alone), and a DIR
left half-built says so instead of a traceback. Marked `bench`, as the smoke runs are."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[2] / "bench" / "report.py"
SMALL = ["--tasks", "2", "--models", "1", "--repeats", "1"]


def bench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SMEVALS_BENCH_SMOKE": "1"}
    return subprocess.run([sys.executable, str(REPORT), *SMALL, *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=200, stdin=subprocess.DEVNULL)


def labels(out: str) -> list[str]:
    return [line.split(":", 1)[0] for line in out.splitlines() if " wall, " in line]


@pytest.mark.bench
def test_a_kept_store_is_timed_again_and_a_half_built_one_is_refused(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    first = bench(tmp_path, "--no-diff", "--keep", str(kept))
    assert first.returncode == 0, first.stderr
    again = bench(tmp_path, "--no-diff", "--keep", str(kept))
    assert again.returncode == 0, again.stderr
    assert labels(again.stdout) == ["report (markdown), cold or warm cache",
                                    "report (markdown), warm cache",
                                    "report --format json, warm cache"]
    assert "setup:" not in again.stdout
    (tmp_path / "half" / "repo").mkdir(parents=True)
    half = bench(tmp_path, "--keep", str(tmp_path / "half"))
    assert (half.returncode, half.stderr) == (
        1, f"{tmp_path / 'half' / 'repo'} holds no built store (a build stopped half-way?): "
           "remove it, or give another --keep\n")
