"""Human labels: a person's pass/fail on a Run, an immutable Grade of the reserved grader
`human` (written by `smevals label`, commands/label.py): read back, shown, and turned into
fixtures."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from smevals.errors import SmevalsError
from smevals.evaldef.load import display_path
from smevals.evaldef.model import Eval
from smevals.grade.labels import HUMAN, who
from smevals.grade.select import grades_by_run
from smevals.graderfixtures.cases import fixtures_dir, safe_name
from smevals.store.read import Obj, Store
from smevals.store.records import GradeRecord, RunRecord


def labels_of(store: Store, run: Obj[Any]) -> list[Obj[GradeRecord]]:
    """The labels of `run`, oldest first (the last one counts)."""
    return grades_by_run(store.grades(), HUMAN).get(run.rel, [])


def label_lines(labels: list[Obj[GradeRecord]]) -> list[str]:
    """One line per label, newest first, for `smevals show`."""
    out = []
    for index, grade in enumerate(reversed(labels)):
        rec = grade.record
        note = rec.get("label", {}).get("note") or ""
        line = (f"  {rec.get('outcome')} by {who(rec)} at {rec.get('graded')} "
                f"(Grade {grade.id}{', counts' if index == 0 else ''})")
        out.append(line + (f"\n    note: {note}" if note else ""))
    return out


def fixtures_from_labels(paths: tuple[str, ...], graders: tuple[str, ...],
                         store: str | None) -> list[str]:
    """A fixture in each selected grader's fixtures folder for every labelled Run that has
    none yet (its newest label is the expected outcome); the lines to print."""
    from smevals.evaldef.pick import load_evals, pick_grader
    from smevals.store.read import store_root

    lines = []
    for ev in load_evals(paths or (".",)):
        st = Store(store_root(ev.path, ev.name, store))
        labelled = grades_by_run(st.grades(), HUMAN)
        runs = {run.rel: run for run in st.runs()}
        for name in graders or tuple(sorted(ev.graders)):
            folder = fixtures_dir(pick_grader(ev, name))
            for rel, labels in sorted(labelled.items()):
                if rel in runs:
                    made = _write_fixture(ev, st, folder, runs[rel], labels[-1])
                    lines.extend([f"wrote {display_path(made)}"] if made else [])
    return lines


def _write_fixture(ev: Eval, st: Store, folder: Path, run: Obj[RunRecord],
                   label: Obj[GradeRecord]) -> Path | None:
    import yaml

    case = folder / f"label-{run.id}.yaml"
    if case.exists():
        return None
    data_dir = folder / "labels" / run.id
    files = {}
    for entry in run.record.get("files") or []:
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str) or "symlink" in entry or entry.get("special") \
                or not (path == "output.txt" or safe_name(path)):
            continue
        target = data_dir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            target.write_bytes(st.read_file(run, path))
        except OSError as exc:
            raise SmevalsError(f"cannot copy {path} of Run {run.id}: {exc}") from None
        if path != "output.txt":
            files[path] = f"labels/{run.id}/{path}"
    if not (data_dir / "output.txt").exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        (data_dir / "output.txt").write_bytes(b"")
    doc = _fixture_doc(ev, run, label, files)
    text = "# Made by `smevals test --from-labels` from a labelled Run.\n" + \
        yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    tmp = case.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, case)
    return case


def _fixture_doc(ev: Eval, run: Obj[RunRecord], label: Obj[GradeRecord],
                 files: dict[str, str]) -> dict[str, Any]:
    rec, lab = run.record, label.record
    name = rec["task"]["name"]
    task: Any = name
    if ev.task(name) is None:             # the Task is gone: its keys as the Run recorded them
        task = {**rec["task"], "grading": dict(rec.get("grading") or {})}
    note = lab.get("label", {}).get("note") or ""
    doc: dict[str, Any] = {
        "description": f"labelled {lab.get('outcome')} by {who(lab)}" + (f": {note}" if note
                                                                        else ""),
        "task": task, "output_file": f"labels/{run.id}/output.txt"}
    if files:
        doc["files"] = files
    if rec.get("usage") is not None:
        doc["usage"] = rec["usage"]
    doc.update({"model": rec["model"], "expect": lab.get("outcome"),
                "label": {"run": run.id, "grade": label.id, "by": who(lab), "note": note}})
    return doc
