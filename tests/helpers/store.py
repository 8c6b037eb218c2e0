"""Building stores for the store tests: records that satisfy the schemas, written through
the real Staging, and small git helpers."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from smevals.store.read import Store
from smevals.store.records import GradeFields, RunFields
from smevals.store.write import Written
from tests.helpers import git


def run_record(i: int = 0, task: str = "t1", config: str = "c", model: str = "m",
               started: str = "2026-01-02T03:04:05Z") -> RunFields:
    return {
        "eval": "e", "task": {"name": task, "prompt": f"prompt {i}"},
        "config": {"name": config, "runner": "./r.sh", "model": model}, "model": model,
        "inputs": {"hash": "h", "task": "t", "config": "c", "runner": "r"}, "sample": i,
        "started": started, "ended": "2026-01-02T03:04:06Z", "duration_seconds": 1,
        "status": "ok",
    }


def grade_record(run: Written, i: int = 0, grader: str = "g", version: str = "v1",
                 graded: str = "2026-01-02T03:05:00Z", names: tuple[str, str, str] =
                 ("t1", "c", "m")) -> GradeFields:
    task, config, model = names
    return {
        "eval": "e", "run": {"id": run.id, "rel": run.rel, "task": task, "config": config,
                             "model": model},
        "grader": {"name": grader, "version": version}, "grading_hash": "x",
        "graded": graded, "outcome": "pass", "score": 1.0, "tags": [], "metrics": {"i": i},
        "checks": [],
    }


def write_run(root: Path, i: int = 0, files: dict[str, bytes] | None = None,
              **names: str) -> Written:
    staging = Store(root).stage("run")
    for rel, data in (files if files is not None else {"output.txt": f"out {i}\n".encode()}
                      ).items():
        (staging.dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (staging.dir / rel).write_bytes(data)
    record = run_record(i, **names)
    rec_names = [record["task"]["name"], record["config"]["name"], record["model"]]
    return staging.commit(record, rec_names)


def write_grade(root: Path, run: Written, i: int = 0, version: str = "v1",
                grader: str = "g") -> Written:
    staging = Store(root).stage("grade")
    (staging.dir / "grader.yaml").write_text(f"checks: [] # {version}\n")
    return staging.commit(grade_record(run, i, grader, version), [grader, "t1", "c", "m"])


def writable(path: Path) -> None:
    """Let a test damage a read-only object file, as a user would have to."""
    path.chmod(0o644)


def commit_all(repo: Path, message: str = "results") -> str:
    if not (repo / ".git").exists():
        git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def remove_tree(path: Path) -> None:
    """rm -rf, read-only object files included."""
    shutil.rmtree(path)


def python(code: str, *args: str, **kwargs: Any) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", code, *args], text=True, **kwargs)
