"""`data/<eval>/explore.js`: one compact line per Run, which the Eval page's filters,
search, Run list and colouring by one Check read (loaded only when one of them is used,
so a big Eval's page opens as quickly as before). Check names and verdict letters are
those of `checktable`."""

from __future__ import annotations

from typing import Any

from smevals.report.rows import ERRORED, cell_of
from smevals.site.checktable import check_names, checks_of, verdict
from smevals.site.data import FORMAT, Loaded
from smevals.site.pages import read_text
from smevals.store.read import Obj
from smevals.store.records import GradeBrief, RunRecord

SEARCH_EXCERPT = 500        # characters of each Run's output.txt the search looks at
TAGS, TAG_CHARS = 20, 100   # a Grade's tags listed (a checker's output is untrusted)


# --- data/<eval>/explore.js ------------------------------------------------------------


def flipped_cells(loaded: Loaded) -> set[tuple[str, str, str]]:
    """(task, config, model) of every flip of the site's diff (none without --diff)."""
    diff = loaded.diff.get("diff") if isinstance(loaded.diff, dict) else None
    flips = diff.get("flips") if isinstance(diff, dict) else None
    return {(str(f.get("task")), str(f.get("config")), str(f.get("model")))
            for f in flips if isinstance(f, dict)} if isinstance(flips, list) else set()


def flaky_cells(grid: dict[str, Any]) -> set[tuple[str, str, str]]:
    """(task, config, model) of the grid's flaky cells (their Runs disagree)."""
    out = set()
    for task, cells in zip(grid["tasks"], grid["cells"], strict=True):
        for column, cell in zip(grid["columns"], cells, strict=True):
            if cell and cell.get("class") == "flaky":
                out.add((task, column["config"], column["model"]))
    return out


def explore_page(loaded: Loaded, grid: dict[str, Any]) -> dict[str, Any]:
    """`data/<eval>/explore.js`: one line per Run (of the Eval's tasks and of tasks deleted
    since): its cell, status, score, tags, flags, its tampering marks (how many, in the Grade
    that counts), each Check's verdict and the start of its output, for the filters and the
    search."""
    errored = {e.run.rel: e.grade for e in loaded.report.collected.excluded
               if e.reason == ERRORED and e.grade is not None}
    counted = [r.grade for r in loaded.report.collected.rows] + list(errored.values())
    names = check_names(counted)
    flaky, flipped = flaky_cells(grid), flipped_cells(loaded)
    runs = [_run_line(loaded, run, names, errored, flaky, flipped) for run in loaded.runs]
    tasks = {name: i for i, name in enumerate(loaded.task_names)}
    columns = {(c["config"], c["model"]): i for i, c in enumerate(grid["columns"])}
    runs.sort(key=lambda r: (tasks.get(r["task"], len(tasks)), r["task"],     # the grid's order
                             columns.get((r["config"], r["model"]), len(columns)), r["config"],
                             r["model"], r["sample"] if isinstance(r["sample"], int) else 0,
                             r["id"]))
    return {"format": FORMAT, "kind": "explore", "eval": loaded.slug, "checks": names,
            "excerpt_chars": SEARCH_EXCERPT, "runs": runs}


def _run_line(loaded: Loaded, run: Obj[RunRecord], names: list[str],
              errored: dict[str, Obj[GradeBrief]], flaky: set[tuple[str, str, str]],
              flipped: set[tuple[str, str, str]]) -> dict[str, Any]:
    cell = cell_of(run)
    row = loaded.rows_by_rel.get(run.rel)
    grade = row.grade if row else errored.get(run.rel)
    found = dict(checks_of(grade)) if grade is not None else {}
    codes = "".join(verdict(found[n]) if n in found else "-" for n in names)
    out = read_text(loaded, run, "output.txt", SEARCH_EXCERPT)
    sample = run.record.get("sample")
    return {"id": run.id, "task": cell[0], "config": cell[1], "model": cell[2],
            "sample": sample if isinstance(sample, int) else None,
            "status": loaded.status(run), "score": row.score if row else None,
            "tags": [t[:TAG_CHARS] for t in row.tags[:TAGS]] if row else [], "checks": codes,
            "flaky": cell in flaky, "flipped": cell in flipped,
            "tampering": len(row.tampering) if row else 0,
            "excerpt": out["text"] if out else "",
            "cut": bool(out and out["truncated"])}
