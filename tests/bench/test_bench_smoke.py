"""Every benchmark runs once at its smallest size, so none rots between the times someone
measures with it. Only that it finishes, and prints its figures, is checked: never a time
(the figures of a smoke run mean nothing; bench/_common.py SMOKE). The runs carry the
marker `bench`: `python -m pytest` leaves them out, `python -m pytest -m bench` runs them
(both are in the README and in .ci/run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

# Each script's smallest arguments.
SMOKE = {
    "agent.py": ["--smoke"],
    "analysis.py": ["--tasks", "2", "--models", "1", "--repeats", "1", "--times", "1"],
    "checkers.py": ["--seconds", "0.001"],
    "crash.py": ["--kills", "1", "--tasks", "1", "--repeat", "5", "--jobs", "1",
                 "--min-delay", "0.05", "--max-delay", "0.1"],
    "datafiles.py": ["--rows", "5", "--repeats", "1"],
    "explore.py": ["--runs", "20", "--entries", "10"],
    "fixtures.py": ["--cases", "2"],
    "grade.py": ["2"],
    "grader_deps.py": ["--modules", "2", "--lines", "2", "--files", "2", "--size", "100",
                       "--repeats", "1"],
    "harness.py": ["--events", "30", "--repeats", "1"],
    "judge.py": ["2", "0.01"],
    "judge_cluster.py": ["2", "0.01"],
    "judge_dedupe.py": ["2", "1", "0.01"],
    "judgecache.py": ["10"],
    "log.py": ["--smoke"],
    "memory.py": ["--smoke"],
    "original.py": ["--original", "/nonexistent/smevals", "--tasks", "2", "--models", "1",
                    "--repeats", "1", "--times", "1"],
    "original_run.py": ["--original", "/nonexistent/smevals", "-n", "2", "-j", "1",
                        "--trials", "1"],
    "overhead.py": ["--smoke", "--trials", "1"],
    "report.py": ["--tasks", "2", "--models", "1", "--repeats", "1"],
    "run.py": ["2"],
    "sandbox.py": ["--files", "5", "--repeats", "1"],
    "scale_out.py": ["2"],
    # past the interpreter's own start-up, the one window no handler can cover (reliability.md;
    # over 1 s on 2 cores loaded by the other tests, so 3 s: a run that finished first is fine)
    "signals.py": ["--trials", "1", "--earliest", "3.0", "--latest", "3.5"],
    "signal_window.py": ["--trials", "1", "--stress", "0", "--linger", "2"],
    "site_history.py": ["--smoke"],
    "site_pictures.py": ["--runs", "2"],
    "store.py": ["--runs", "10", "--grades", "10"],
    "templates.py": ["--tasks", "2", "--repeats", "1"],
    "validation.py": ["--skip-commands", "--repeats", "1"],
    "workspace.py": ["--files", "5", "--repeats", "1"],
}


def test_every_benchmark_has_its_smoke_run() -> None:
    scripts = sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_"))
    assert scripts == sorted(SMOKE)


@pytest.mark.bench
@pytest.mark.timeout(240)
@pytest.mark.parametrize("script", sorted(SMOKE))
def test_the_benchmark_runs(script: str, tmp_path: Path) -> None:
    env = {**os.environ, "SMEVALS_BENCH_SMOKE": "1", "BENCH_DIR": str(tmp_path)}
    proc = subprocess.run([sys.executable, str(BENCH / script), *SMOKE[script]], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=200,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stdout.strip(), proc.stderr[-2000:]


def _collected(*args: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-n", "0",
                           "-p", "no:cacheprovider", *args, str(Path(__file__))], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    return [line.split("::", 1)[1] for line in proc.stdout.splitlines() if "::" in line]


def test_the_smoke_runs_are_selected_by_the_bench_marker_alone() -> None:
    """The README's `python -m pytest` collects none of them; `-m bench` all of them."""
    assert _collected() == ["test_every_benchmark_has_its_smoke_run",
                            "test_the_smoke_runs_are_selected_by_the_bench_marker_alone"]
    assert _collected("-m", "bench") == [f"test_the_benchmark_runs[{name}]"
                                         for name in sorted(SMOKE)]
