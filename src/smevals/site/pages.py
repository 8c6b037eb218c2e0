"""Page data of one Task (the Runs of every model side by side) and of one Run (prompt,
output, artifacts, Checks, Grade history). Files are linked through a `Linker`: the static
build copies them under safe names, `serve` links them by their recorded path."""

from __future__ import annotations

from typing import Any

from smevals.grade.score import score_note
from smevals.report.rows import cell_of, runner_of, tampering_of
from smevals.site import artifacts
from smevals.site.data import FORMAT, Loaded
from smevals.site.gallery import Linker, picture_json, read_head
from smevals.site.texts import capped, read_text, text_of
from smevals.store.read import AnyObj, Obj
from smevals.store.records import CheckRecord, FileEntry, GradeRecord, RunBrief, RunRecord

OUTPUT_LIMIT = 256 * 1024       # characters of output.txt on a Run page
STDERR_LIMIT = 64 * 1024
PREVIEW_LIMIT = 16 * 1024       # a text artifact shown inline up to this size
EXCERPT_LIMIT = 1500            # characters of output.txt per Run on a Task page
EXCERPT_RUNS = 20               # Runs per model shown with their output on a Task page
TAMPERING_SHOWN = 100           # tampering marks of a Grade listed on its Run page
SHOWN_APART = ("output.txt", "stderr.txt")
RECORD_KEYS = ("started", "ended", "duration_seconds", "exit_code", "failure", "usage",
               "usage_error", "provenance", "inputs", "text", "truncated")


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def column_order(loaded: Loaded, cells: set[tuple[str, str]]) -> list[tuple[str, str]]:
    ranked = [(g.config, g.model) for g in loaded.report.groups]
    return [c for c in ranked if c in cells] + sorted(cells - set(ranked))


# --- Task page -------------------------------------------------------------------------


def task_page(loaded: Loaded, task: str) -> dict[str, Any]:
    """`data/<eval>/tasks/<task>.js`."""
    runs = loaded.runs_by_task.get(task, [])
    split: dict[tuple[str, str], list[Obj[RunRecord]]] = {}
    for run in runs:
        split.setdefault(cell_of(run)[1:], []).append(run)
    counted = {(g.config, g.model): t for g in loaded.report.groups for t in g.tasks
               if t.task == task}
    columns = []
    for key in column_order(loaded, set(split)):
        items = sorted(split[key], key=_sample_order)
        stats = counted.get(key)
        columns.append({"config": key[0], "model": key[1],
                        "runs": [run_brief(loaded, r, i < EXCERPT_RUNS)
                                 for i, r in enumerate(items)],
                        "counted": stats.n if stats else 0,
                        "passed": stats.passed if stats else 0,
                        "mean": stats.mean if stats else None,
                        "scored": len(stats.scores) if stats else 0})
    current = loaded.ev.task(task)
    newest = max(runs, key=lambda r: str(r.record.get("started", "")), default=None)
    doc = current.doc if current else (newest.record.get("task") if newest else None)
    return {"format": FORMAT, "kind": "task", "eval": loaded.slug, "task": task,
            "slug": loaded.task_slugs.get(task, task), "current": current is not None,
            "doc": capped(doc), "columns": columns}


def _sample_order(run: Obj[RunBrief]) -> tuple[int, str]:
    sample = run.record.get("sample")
    return (sample if isinstance(sample, int) else 0, run.id)


def run_brief(loaded: Loaded, run: Obj[RunRecord], with_output: bool) -> dict[str, Any]:
    rec = run.record
    row = loaded.rows_by_rel.get(run.rel)
    failure = rec.get("failure") if isinstance(rec.get("failure"), dict) else None
    return {"id": run.id, "sample": rec.get("sample"), "started": rec.get("started"),
            "status": loaded.status(run), "score": row.score if row else None,
            "score_note": score_note(row.grade.record) if row else "",
            "tags": row.tags if row else [], "grade_id": row.grade.id if row else None,
            "failure": failure.get("kind") if failure else None,
            "output": read_text(loaded, run, "output.txt", EXCERPT_LIMIT) if with_output
            else None}


# --- Run page --------------------------------------------------------------------------


def run_page(loaded: Loaded, run: Obj[RunRecord], linker: Linker) -> dict[str, Any]:
    """`data/<eval>/runs/<id>.js`."""
    rec = run.record
    task, config, model = cell_of(run)
    row = loaded.rows_by_rel.get(run.rel)
    task_doc = _mapping(rec.get("task"))
    history = loaded.history.get(run.rel, [])
    files = files_of(loaded, run, linker)
    grades = [grade_json(loaded, g, linker, row.grade.id if row else None)
              for g in reversed(history)]
    return {
        "format": FORMAT, "kind": "run", "eval": loaded.slug, "id": run.id, "rel": run.rel,
        "task": task, "task_slug": loaded.task_slugs.get(task, task), "config": config,
        "model": model, "sample": rec.get("sample"), "status": loaded.status(run),
        "prompt": capped(task_doc.get("prompt")), "messages": capped(task_doc.get("messages")),
        "task_doc": capped(task_doc), "config_doc": capped(rec.get("config")),
        "runner": runner_of(run),       # a harness's or the agent's name and version
        "record": {key: capped(rec.get(key)) for key in RECORD_KEYS},
        "output": read_text(loaded, run, "output.txt", OUTPUT_LIMIT),
        "stderr": read_text(loaded, run, "stderr.txt", STDERR_LIMIT),
        "files": files, "grade_id": row.grade.id if row else None, "grades": grades,
        "labels": labels_json(history), **steps_of(loaded, run, files, history, grades),
    }


def steps_of(loaded: Loaded, run: Obj[RunRecord], files: list[dict[str, Any]],
             history: list[Obj[GradeRecord]], grades: list[dict[str, Any]]) -> dict[str, Any]:
    """The Run page's timelines (transcript, tool calls, judge calls of the Grade that
    counts, or of the errored Grade that left the Run out) and its workspace.diff
    (site/timeline.py)."""
    from smevals.report.rows import ERRORED
    from smevals.site.timeline import run_timelines, workspace_diff

    item = loaded.excluded_by_rel.get(run.rel)
    errored = item.grade.id if item and item.reason == ERRORED and item.grade else None
    shown = next((g for g in grades if g["counts"] or g["id"] == errored), None)
    grade = next((g for g in history if shown and g.id == shown["id"]), None)
    return {"timelines": run_timelines(loaded, run, files, grade,
                                       shown["files"] if shown else []),
            "workspace_diff": workspace_diff(loaded, run)}


def labels_json(history: list[Obj[GradeRecord]]) -> list[dict[str, Any]]:
    """The Run's labels (Grades of the grader `human`), newest first; the first counts."""
    from smevals.grade.labels import HUMAN, who

    labels = [g for g in reversed(history)
              if _mapping(g.record.get("grader")).get("name") == HUMAN]
    return [{"id": g.id, "outcome": g.record.get("outcome"), "by": who(g.record),
             "note": capped(_mapping(g.record.get("label")).get("note") or ""),
             "graded": g.record.get("graded"), "counts": i == 0}
            for i, g in enumerate(labels)]


def grade_json(loaded: Loaded, grade: Obj[GradeRecord], linker: Linker,
               counted: str | None) -> dict[str, Any]:
    rec = grade.record
    grader = _mapping(rec.get("grader"))
    name, version = str(grader.get("name")), str(grader.get("version"))
    report = loaded.report
    checks = rec.get("checks")
    return {
        "id": grade.id, "grader": name, "version": version,
        "current": name == report.grader and version.startswith(report.version),
        "counts": grade.id == counted, "graded": rec.get("graded"),
        "outcome": rec.get("outcome"), "score": rec.get("score"), "method": rec.get("method"),
        "score_note": score_note(rec),
        **_tampering(rec),
        "tags": capped(rec.get("tags")), "metrics": capped(rec.get("metrics")),
        "duration_seconds": rec.get("duration_seconds"),
        "grading_hash": rec.get("grading_hash"),
        "checks": [check_json(c) for c in (checks if isinstance(checks, list) else [])
                   if isinstance(c, dict)],
        "files": files_of(loaded, grade, linker),
    }


def _tampering(rec: GradeRecord) -> dict[str, Any]:
    """The Grade's tampering marks as the Run page lists them, and how many are not listed."""
    marks = tampering_of(rec)
    cut = rec.get("tampering_cut")
    left = cut if isinstance(cut, int) and not isinstance(cut, bool) else 0
    return {"tampering": marks[:TAMPERING_SHOWN],
            "tampering_cut": max(len(marks) - TAMPERING_SHOWN, 0) + left}


def check_json(check: CheckRecord) -> dict[str, Any]:
    return {key: capped(value) for key, value in check.items()}


def files_of(loaded: Loaded, obj: AnyObj, linker: Linker) -> list[dict[str, Any]]:
    """Every recorded file of `obj`: its kind, links and (small text) a preview."""
    entries = obj.record.get("files")
    out = []
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            out.append(file_json(loaded, obj, entry, linker))
    return out


def file_json(loaded: Loaded, obj: AnyObj, entry: FileEntry, linker: Linker) -> dict[str, Any]:
    path = entry["path"]
    info: dict[str, Any] = {"path": path, "size": entry.get("size")}
    if not artifacts.safe_inner(path):
        return {**info, "kind": "unsafe"}
    size = entry.get("size")
    if isinstance(size, int) and size > _run_limit():     # never read, never copied
        return {**info, "kind": "binary", "not_shown": artifacts.over_limit(_run_limit())}
    head = None if "symlink" in entry or entry.get("special") else \
        read_head(loaded, obj, path, 4 * PREVIEW_LIMIT)
    kind = artifacts.kind_of(entry, head)
    info["kind"] = kind
    if kind == "link":
        return {**info, "target": str(entry.get("symlink"))}
    if kind in ("special", "missing"):
        return info
    info.update(linker.link(obj, path, kind))
    info.update(picture_json(loaded, obj, entry, kind, head, linker))
    if kind == "text" and not (obj.kind == "run" and path in SHOWN_APART):
        info["preview"] = text_of(head, PREVIEW_LIMIT)
    return info


def _run_limit() -> int:
    from smevals.run.bounds import limits

    return limits().size
