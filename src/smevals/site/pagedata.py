"""The shape of the site's page data for the site index and the Eval and tag pages
(site/data.py: `data/index.js`, `data/<eval>/index.js`, `data/<eval>/tags/<tag>.js`),
described by schemas/site.schema.json, for the type checker. At run time these are plain
dicts, written as built (site/jsdata.py); `tests/site/test_page_data_types.py` holds every
TypedDict here to its schema node and the pages of a built site to the schema.

Their figures are the report's (report/jsondoc.py): a leaderboard entry is the report's
without its tasks and Checks, with the mean's interval.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from smevals.report.jsondoc import CheckFigures, MetricFigures, RunnerCount, Summary

__all__ = ["BoardEntry", "CheckCell", "CheckLine", "EvalPage", "EvalSummary", "EvalSummaryFigures",
           "Grid", "GridCell", "GridColumn", "PageGrader", "PageView", "Pooled", "SiteBest",
           "SiteIndex", "TagFacet", "TagPage", "TaskEntry"]


class BoardEntry(TypedDict):
    """One config x model of a page's leaderboard."""

    rank: int
    config: str
    model: str
    runs: int
    passed: int
    failed: int
    scored: int
    mean: float | None
    stderr: float | None
    pass_rate: float | None
    pass_rate_ci: list[float]
    metrics: list[MetricFigures]
    runners: NotRequired[list[RunnerCount]]
    mean_ci: list[float] | None     # the mean's normal 95% interval; None under two scores


class GridColumn(TypedDict):
    config: str
    model: str


# `class` is a keyword: the functional form. A cell with only uncounted Runs has no `scored`.
GridCell = TypedDict("GridCell", {"runs": int, "passed": int, "mean": float | None,
                                  "scored": NotRequired[int], "class": str | None,
                                  "excluded": int})


class Grid(TypedDict):
    """The task x model grid: one row of cells per task, a cell per column (None: no Run)."""

    columns: list[GridColumn]
    tasks: list[str]
    cells: list[list[GridCell | None]]


class CheckCell(CheckFigures):
    text: str                       # what `report` prints for it


class CheckLine(TypedDict):
    """A Check of the Checks table: a cell per column (None: no Grade there)."""

    check: str
    columns: list[CheckCell | None]


class TagFacet(TypedDict):
    tag: str
    slug: str
    count: int
    share: float


class TaskEntry(TypedDict):
    name: str
    slug: str
    runs: int
    current: bool                   # False: only older Runs know of it


class PageGrader(TypedDict):
    name: str
    version: str
    choice: str


class EvalSummaryFigures(Summary):
    mean_ci: list[float] | None


class PageView(TypedDict):
    """What the Eval and tag pages share: the leaderboard, the grid, the Checks table."""

    ranked_by: str
    leaderboard: list[BoardEntry]
    grid: Grid
    checks: list[CheckLine]


class EvalPage(TypedDict):
    """`data/<eval>/index.js`."""

    format: int
    kind: Literal["eval"]
    slug: str
    name: str
    description: str
    path: str
    store: str
    rev: str | None
    commit: str | None
    generated: str
    grader: PageGrader
    summary: EvalSummaryFigures
    notes: list[str]
    tasks: list[TaskEntry]
    tags: list[TagFacet]
    diff: bool
    pictures: bool
    history: bool
    ranked_by: str
    leaderboard: list[BoardEntry]
    grid: Grid
    checks: list[CheckLine]


class Pooled(TypedDict):
    """A tag page's figures over the rows that carry the tag."""

    graded: int
    passed: int
    failed: int
    scored: int
    mean: float | None
    stderr: float | None
    mean_ci: list[float] | None
    pass_rate: float | None
    pass_rate_ci: list[float]


class TagPage(TypedDict):
    """`data/<eval>/tags/<tag>.js`."""

    format: int
    kind: Literal["tag"]
    eval: str
    tag: str
    slug: str
    summary: Pooled
    ranked_by: str
    leaderboard: list[BoardEntry]
    grid: Grid
    checks: list[CheckLine]


class SiteBest(TypedDict):
    config: str
    model: str
    mean: float | None
    pass_rate: float | None
    scored: int
    runs: int


class EvalSummary(TypedDict):
    """One Eval's entry in the site index."""

    slug: str
    name: str
    description: str
    runs: int
    graded: int
    passed: int
    pass_rate: float | None
    mean: float | None
    scored: int
    tasks: int
    models: int
    ranked_by: str
    best: SiteBest | None
    grader: str
    version: str
    updated: str | None
    diff: bool


class SiteIndex(TypedDict):
    """`data/index.js`."""

    format: int
    kind: Literal["site"]
    generated: str
    live: bool
    poll_seconds: float
    evals: list[EvalSummary]
