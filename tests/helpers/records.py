"""Reading the Run and Grade records a command left in an Eval's results folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def grade_records(ev: Path) -> list[dict[str, Any]]:
    """Every grade.json under `ev`/results/grades, by task, model and time graded."""
    recs = [json.loads(p.read_text()) for p in (ev / "results" / "grades").rglob("grade.json")]
    return sorted(recs, key=lambda r: (r["run"]["task"], r["run"]["model"], r["graded"]))


def grades_by_task(ev: Path) -> dict[str, list[dict[str, Any]]]:
    """Grade records by task, oldest first; each with `_dir`, the folder it is in."""
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((ev / "results" / "grades").rglob("grade.json")):
        record = json.loads(path.read_text())
        record["_dir"] = str(path.parent)
        out.setdefault(record["run"]["task"], []).append(record)
    for items in out.values():
        items.sort(key=lambda r: r["graded"])
    return out


def runs(ev: Path) -> list[dict[str, Any]]:
    """Every Run record in the Eval's default store, sorted by task, model, sample, started."""
    records = [json.loads(p.read_text()) for p in (ev / "results" / "runs").rglob("run.json")]
    return sorted(records, key=lambda r: (r["task"]["name"], r["model"], r["sample"],
                                          r["started"]))


def run_dirs(ev: Path) -> list[Path]:
    """The folder of every Run in the Eval's default store, in id order."""
    return sorted(p.parent for p in (ev / "results" / "runs").rglob("run.json"))
