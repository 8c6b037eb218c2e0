"""Record types: mypy, with the project's configuration, catches a misspelled field of a Run
or Grade record, whether it is read from the store (in full or in the brief view) or built
by a writer (store/records.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

USER = '''\
from pathlib import Path

from smevals.store.records import GradeFields, RunFields
from smevals.store.read import Store

store = Store(Path("results"))
for run in store.runs():
    print(run.record["task"]["name"], run.record["files"], run.record.get("sample"))
    print(run.record["stauts"], run.record.get("sampel"))
for grade in store.grades(brief=True):
    print(grade.record["outcome"], grade.record["grader"]["version"])
    print(grade.record.get("outcom"), grade.record["grader"]["verison"])
    print(grade.record["files"])
for brief in store.runs(brief=True):
    print(brief.record["inputs"]["hash"], brief.record["inptus"])
run_fields: RunFields = {
    "eval": "e", "task": {"name": "t"}, "config": {"name": "c"}, "model": "m",
    "inputs": {"hash": "h", "task": "t", "config": "c", "runner": "r"},
    "started": "s", "ended": "e", "duration_second": 1.0, "status": "ok"}
grade_fields: GradeFields = {
    "eval": "e", "run": {"id": "i", "rel": "r", "task": "t", "config": "c", "model": "m"},
    "grader": {"name": "g", "version": "v"}, "grading_hash": "h", "graded": "g",
    "outcome": "pass", "score": None, "tags": [], "metrics": {},
    "checks": [{"checker": "contains", "okay": True}]}
'''


def _mypy(tmp_path: Path) -> list[tuple[int, str]]:
    module = tmp_path / "user_of_records.py"
    module.write_text(USER, encoding="utf-8")
    # The project's own mypy cache (which `.ci/run`'s `mypy` has just filled): smevals'
    # modules are then read from it instead of checked again (4 s of CPU against 1 s).
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(ROOT / ".mypy_cache"), "--no-error-summary", "--hide-error-context",
         "--show-error-codes", str(module)],
        capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode in (0, 1), proc.stderr
    found = []
    for line in proc.stdout.splitlines():
        match = re.match(r".*user_of_records\.py:(\d+): error: (.*)", line)
        if match:
            found.append((int(match.group(1)), match.group(2)))
    return found


def test_mypy_catches_misspelled_record_fields(tmp_path: Path) -> None:
    """Before the record types every one of these passed: records were `dict[str, Any]`."""
    assert _mypy(tmp_path) == [
        (9, 'TypedDict "RunRecord" has no key "stauts"  [typeddict-item]'),
        (9, 'TypedDict "RunRecord" has no key "sampel"  [typeddict-item]'),
        (12, 'TypedDict "GradeBrief" has no key "outcom"  [typeddict-item]'),
        (12, 'TypedDict "GraderRefBrief" has no key "verison"  [typeddict-item]'),
        (13, 'TypedDict "GradeBrief" has no key "files"  [typeddict-item]'),
        (15, 'TypedDict "RunBrief" has no key "inptus"  [typeddict-item]'),
        (16, 'Missing key "duration_seconds" for TypedDict "RunFields"  [typeddict-item]'),
        (16, 'Extra key "duration_second" for TypedDict "RunFields"  [typeddict-unknown-key]'),
        (24, 'Extra key "okay" for TypedDict "CheckRecord"  [typeddict-unknown-key]'),
    ]
