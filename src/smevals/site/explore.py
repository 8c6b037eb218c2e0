"""`data/<eval>/explore.js`: one compact line per Run, which the Eval page's filters,
search, Run list and colouring by one Check read (loaded only when one of them is used,
so a big Eval's page opens as quickly as before). Check names and verdict letters are
those of `checktable`."""

from __future__ import annotations

from typing import Any

from smevals.report.rows import ERRORED, cell_of
from smevals.site import artifacts
from smevals.site.checktable import check_names, checks_of, verdict
from smevals.site.data import FORMAT, Loaded
from smevals.site.pagedata import Grid
from smevals.site.search import OUTPUT_BYTES, Index
from smevals.site.texts import read_text, text_of
from smevals.store.read import Obj
from smevals.store.records import GradeBrief, RunRecord

SEARCH_EXCERPT = 500        # characters of each Run's output.txt shown (search.py: the whole)
TAGS, TAG_CHARS = 20, 100   # a Grade's tags listed (a checker's output is untrusted)


# --- data/<eval>/explore.js ------------------------------------------------------------


def flipped_cells(loaded: Loaded) -> set[tuple[str, str, str]]:
    """(task, config, model) of every flip of the site's diff (none without --diff)."""
    diff = loaded.diff.get("diff") if isinstance(loaded.diff, dict) else None
    flips = diff.get("flips") if isinstance(diff, dict) else None
    return {(str(f.get("task")), str(f.get("config")), str(f.get("model")))
            for f in flips if isinstance(f, dict)} if isinstance(flips, list) else set()


def flaky_cells(grid: Grid) -> set[tuple[str, str, str]]:
    """(task, config, model) of the grid's flaky cells (their Runs disagree)."""
    out: set[tuple[str, str, str]] = set()
    for task, cells in zip(grid["tasks"], grid["cells"], strict=True):
        for column, cell in zip(grid["columns"], cells, strict=True):
            if cell and cell.get("class") == "flaky":
                out.add((task, column["config"], column["model"]))
    return out


def explore_page(loaded: Loaded, grid: Grid,
                 index: Index | None = None) -> dict[str, Any]:
    """`data/<eval>/explore.js`: one line per Run (of the Eval's tasks and of tasks deleted
    since): its cell, status, score, tags, flags, its tampering marks (how many, in the Grade
    that counts), each Check's verdict and the start of its output, for the filters and the
    search. With `index`, each Run's whole output is added to it too (search.py), in the
    same order, each output read once."""
    errored = {e.run.rel: e.grade for e in loaded.report.collected.excluded
               if e.reason == ERRORED and e.grade is not None}
    counted = [r.grade for r in loaded.report.collected.rows] + list(errored.values())
    names = check_names(counted)
    flaky, flipped = flaky_cells(grid), flipped_cells(loaded)
    tasks = {name: i for i, name in enumerate(loaded.task_names)}
    columns = {(c["config"], c["model"]): i for i, c in enumerate(grid["columns"])}

    def order(run: Obj[RunRecord]) -> tuple[Any, ...]:          # the grid's order
        task, config, model = cell_of(run)
        sample = run.record.get("sample")
        return (tasks.get(task, len(tasks)), task, columns.get((config, model), len(columns)),
                config, model, sample if isinstance(sample, int) else 0, run.id)

    runs = [_run_line(loaded, run, names, errored, flaky, flipped, index)
            for run in sorted(loaded.runs, key=order)]
    return {"format": FORMAT, "kind": "explore", "eval": loaded.slug, "checks": names,
            "excerpt_chars": SEARCH_EXCERPT, "runs": runs}


def _run_line(loaded: Loaded, run: Obj[RunRecord], names: list[str],
              errored: dict[str, Obj[GradeBrief]], flaky: set[tuple[str, str, str]],
              flipped: set[tuple[str, str, str]], index: Index | None) -> dict[str, Any]:
    cell = cell_of(run)
    row = loaded.rows_by_rel.get(run.rel)
    grade = row.grade if row else errored.get(run.rel)
    found = dict(checks_of(grade)) if grade is not None else {}
    codes = "".join(verdict(found[n]) if n in found else "-" for n in names)
    if index is None:
        out = read_text(loaded, run, "output.txt", SEARCH_EXCERPT)
    else:
        data = artifacts.read_bytes(loaded.store, run, "output.txt", OUTPUT_BYTES + 1)
        index.add(artifacts.decode(data[:OUTPUT_BYTES]) if data else "",
                  cut=bool(data and len(data) > OUTPUT_BYTES))
        out = text_of(data[:4 * SEARCH_EXCERPT] if data else None, SEARCH_EXCERPT)
    sample = run.record.get("sample")
    return {"id": run.id, "task": cell[0], "config": cell[1], "model": cell[2],
            "sample": sample if isinstance(sample, int) else None,
            "status": loaded.status(run), "score": row.score if row else None,
            "tags": [t[:TAG_CHARS] for t in row.tags[:TAGS]] if row else [], "checks": codes,
            "flaky": cell in flaky, "flipped": cell in flipped,
            "tampering": len(row.tampering) if row else 0,
            "excerpt": out["text"] if out else "",
            "cut": bool(out and out["truncated"])}
