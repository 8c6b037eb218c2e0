"""Page data of one Eval: the site index entry, the Eval's leaderboard and task x model
grid, and the same for the rows that carry one tag.

Every number comes from the report (`smevals.report`): its rows (the Grade that counts for
each Run, chosen by `smevals.grade.select`), its leaderboard groups, ranks, repeats and
JSON entries. The site only arranges them for the pages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, cast

from smevals import stats
from smevals.evaldef.model import Eval
from smevals.grade.select import grades_by_run, superseded_errors
from smevals.report.document import EvalReport
from smevals.report.formats import group_json, summary_json
from smevals.report.repeats import repeats
from smevals.report.rows import Excluded, Row, cell_of
from smevals.report.summary import Group, leaderboard, ranked_by, ranks, tag_counts
from smevals.site.checktable import check_table, errored_grades
from smevals.site.pagedata import (
    BoardEntry,
    EvalPage,
    EvalSummary,
    Grid,
    GridCell,
    PageView,
    Pooled,
    SiteIndex,
    TagFacet,
    TagPage,
)
from smevals.site.picturefiles import picture_entries
from smevals.store.layout import slug
from smevals.store.read import Obj, Store
from smevals.store.records import GradeRecord, RunRecord

FORMAT = 1


@dataclass
class Loaded:
    """One Eval read for the site: its authoring files, its store and its report."""

    slug: str
    ev: Eval
    store: Store
    report: EvalReport
    generated: str
    diff: dict[str, Any] | None = None      # `smevals diff --format json` of this Eval
    history_doc: dict[str, Any] | None = None   # its History page (build --history)
    diffs: dict[str, dict[str, Any]] = field(default_factory=dict)   # a diff page per commit

    @property
    def runs(self) -> list[Obj[RunRecord]]:
        """The report's Runs, in full: the site reports with `full_records`."""
        return cast(list[Obj[RunRecord]], self.report.collected.runs)

    @cached_property
    def runs_by_id(self) -> dict[str, Obj[RunRecord]]:
        return {run.id: run for run in self.runs}

    @cached_property
    def grades_by_id(self) -> dict[str, Obj[GradeRecord]]:
        return {grade.id: grade for grade in self.store.grades()}

    @cached_property
    def rows_by_rel(self) -> dict[str, Row]:
        return {row.run.rel: row for row in self.report.collected.rows}

    @cached_property
    def excluded_by_rel(self) -> dict[str, Excluded]:
        return {item.run.rel: item for item in self.report.collected.excluded}

    @cached_property
    def history(self) -> dict[str, list[Obj[GradeRecord]]]:
        """Run rel -> every Grade of it (any grader, any version), oldest first, but for
        errored Grades a later verdict of the same grader version replaced (retries)."""
        grades = self.store.grades()
        retried = superseded_errors(grades)
        grades = [g for g in grades if g.id not in retried] if retried else grades
        names = sorted({str(g.record.get("grader", {}).get("name")) for g in grades})
        out: dict[str, list[Obj[GradeRecord]]] = {}
        for name in names:
            for rel, items in grades_by_run(grades, name).items():
                out.setdefault(rel, []).extend(items)
        return out

    @cached_property
    def runs_by_task(self) -> dict[str, list[Obj[RunRecord]]]:
        out: dict[str, list[Obj[RunRecord]]] = {}
        for run in self.runs:
            out.setdefault(cell_of(run)[0], []).append(run)
        return out

    @cached_property
    def task_names(self) -> list[str]:
        """The Eval's tasks in its order, then tasks only Runs know of (removed since)."""
        names = [t.name for t in self.ev.tasks]
        known = set(names)
        extra = sorted(set(self.runs_by_task) - known)
        return names + extra

    @cached_property
    def current_tasks(self) -> list[str]:
        """The Eval's tasks, in its order: the grid's rows and the tasks counted. Tasks that
        only old Runs know of (deleted since) are listed apart (`eval_index`)."""
        return [t.name for t in self.ev.tasks]

    @cached_property
    def task_slugs(self) -> dict[str, str]:
        return {name: slug(name) for name in self.task_names}

    def status(self, run: Obj[Any]) -> str:
        """pass or fail (the Grade that counts), else why the Run is not counted."""
        row = self.rows_by_rel.get(run.rel)
        if row is not None:
            return "pass" if row.passed else "fail"
        item = self.excluded_by_rel.get(run.rel)
        return item.reason if item else "ungraded"


def mean_interval(group: Group) -> list[float] | None:
    """The mean score's normal 95% interval (mean +- 1.96 stderr), clipped to [0, 1]; none
    over fewer than two scores (`stats.mean_interval`)."""
    interval = stats.mean_interval(group.scores)
    return list(interval) if interval else None


def pooled_json(rows: list[Row]) -> Pooled:
    group = Group("", "", list(rows))
    low, high = group.wilson
    return {"graded": group.n, "passed": group.passed, "failed": group.failed,
            "scored": len(group.scores), "mean": group.mean, "stderr": group.stderr,
            "mean_ci": mean_interval(group), "pass_rate": group.pass_rate if group.n else None,
            "pass_rate_ci": [low, high]}


def view(rows: list[Row], tasks: list[str], excluded: list[Excluded]) -> PageView:
    """The leaderboard and the task x model grid of `rows` (one grid row per task of
    `tasks`: Runs of other tasks are left out of it)."""
    groups = leaderboard(rows)
    board = []
    for rank, group in zip(ranks(groups), groups, strict=True):
        # the Checks table has them, errored Grades too
        entry = cast(BoardEntry, {key: value for key, value in group_json(group, rank).items()
                                  if key not in ("tasks", "checks")})
        entry["mean_ci"] = mean_interval(group)
        board.append(entry)
    shown = set(tasks)
    excluded = [e for e in excluded if e.task in shown]
    table = grid(groups, tasks, excluded)
    columns = [(c["config"], c["model"]) for c in table["columns"]]
    return {"ranked_by": ranked_by(groups), "leaderboard": board, "grid": table,
            "checks": check_table([r for r in rows if r.task in shown],
                                  errored_grades(excluded), columns)}


def grid(groups: list[Group], tasks: list[str], excluded: list[Excluded]) -> Grid:
    """Columns (config, model) in leaderboard order, then those with only uncounted Runs;
    one row per task; a cell per column with its counted Runs, passes, mean and class."""
    classes = {(rep.config, rep.model, cell.task): cell.kind
               for rep in repeats(groups) for cell in rep.cells}
    columns = [(g.config, g.model) for g in groups]
    left_out: dict[tuple[str, str, str], int] = {}
    for item in excluded:
        left_out[(item.config, item.model, item.task)] = \
            left_out.get((item.config, item.model, item.task), 0) + 1
    columns += sorted({(c, m) for c, m, _t in left_out} - set(columns))
    by_key = {(g.config, g.model, t.task): t for g in groups for t in g.tasks}
    cells = [[_cell(by_key.get((c, m, task)), classes.get((c, m, task)),
                    left_out.get((c, m, task), 0)) for c, m in columns] for task in tasks]
    return {"columns": [{"config": c, "model": m} for c, m in columns],
            "tasks": tasks, "cells": cells}


def _cell(group: Group | None, kind: str | None, left_out: int) -> GridCell | None:
    if group is None and not left_out:
        return None
    if group is None:
        return {"runs": 0, "passed": 0, "mean": None, "class": None, "excluded": left_out}
    return {"runs": group.n, "passed": group.passed, "mean": group.mean,
            "scored": len(group.scores), "class": kind or "single", "excluded": left_out}


def tag_facets(rows: list[Row]) -> list[TagFacet]:
    total = len(rows)
    return [{"tag": tag, "slug": slug(tag), "count": n, "share": n / total}
            for tag, n in tag_counts(rows)]


def has_pictures(loaded: Loaded) -> bool:
    """Whether a Run, or the Grade that counts for it, has a file named like a picture
    (the Eval page then offers its thumbnails)."""
    for run in loaded.runs:
        if picture_entries(run):
            return True
    return any(picture_entries(loaded.grades_by_id.get(row.grade.id))
               for row in loaded.report.collected.rows)


def eval_index(loaded: Loaded) -> EvalPage:
    """`data/<eval>/index.js`: the Eval page (leaderboard, grid, tag facets)."""
    report, ev = loaded.report, loaded.ev
    c = report.collected
    current = set(loaded.current_tasks)
    return {
        "format": FORMAT, "kind": "eval", "slug": loaded.slug, "name": ev.name,
        "description": ev.description, "path": report.path, "store": report.store,
        "rev": report.rev, "commit": report.commit, "generated": loaded.generated,
        "grader": {"name": report.grader, "version": report.version, "choice": report.choice},
        "summary": {**summary_json(report), "mean_ci": mean_interval(Group("", "", c.rows))},
        "notes": list(report.notes),
        "tasks": [{"name": t, "slug": loaded.task_slugs[t],
                   "runs": len(loaded.runs_by_task.get(t, [])), "current": t in current}
                  for t in loaded.task_names],
        "tags": tag_facets(c.rows), "diff": loaded.diff is not None,
        "pictures": has_pictures(loaded), "history": loaded.history_doc is not None,
        **view(c.rows, loaded.current_tasks, c.excluded),
    }


def tag_view(loaded: Loaded, tag: str) -> TagPage:
    """`data/<eval>/tags/<tag>.js`: the leaderboard and grid of the rows tagged `tag`."""
    rows = [row for row in loaded.report.collected.rows if tag in row.tags]
    return {"format": FORMAT, "kind": "tag", "eval": loaded.slug, "tag": tag,
            "slug": slug(tag), "summary": pooled_json(rows),
            **view(rows, loaded.current_tasks, [])}


def tags_of(loaded: Loaded) -> list[str]:
    return [tag for tag, _n in tag_counts(loaded.report.collected.rows)]


def eval_summary(loaded: Loaded) -> EvalSummary:
    """One Eval's entry in the site index (`data/index.js`)."""
    report = loaded.report
    c = report.collected
    best = report.groups[0] if report.groups else None
    stamps = [str(r.record.get("started", "")) for r in c.runs]
    stamps += [str(r.grade.record.get("graded", "")) for r in c.rows]
    return {
        "slug": loaded.slug, "name": loaded.ev.name, "description": loaded.ev.description,
        "runs": len(c.runs), "graded": len(c.rows), "passed": c.passed,
        "pass_rate": c.passed / len(c.rows) if c.rows else None,
        "mean": stats.mean([r.score for r in c.rows if r.score is not None]),
        "scored": sum(1 for r in c.rows if r.score is not None),
        "tasks": len(loaded.current_tasks), "models": len(report.groups),
        "ranked_by": ranked_by(report.groups),
        "best": None if best is None else {"config": best.config, "model": best.model,
                                           "mean": best.mean, "pass_rate": best.pass_rate,
                                           "scored": len(best.scores), "runs": best.n},
        "grader": report.grader, "version": report.version,
        "updated": max(stamps) if stamps else None, "diff": loaded.diff is not None,
    }


def site_index(summaries: list[EvalSummary], generated: str, live: bool,
               poll_seconds: float = 0) -> SiteIndex:
    """`data/index.js`: every Eval of the site, by name."""
    ordered = sorted(summaries, key=lambda s: (str(s.get("name")), str(s.get("slug"))))
    return {"format": FORMAT, "kind": "site", "generated": generated, "live": live,
            "poll_seconds": poll_seconds, "evals": ordered}
