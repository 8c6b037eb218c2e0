"""The read API of `import smevals` (docs/analysis.md): the Runs, Grades and Checks that
`report` counts, and `log`'s figures, as typed records or as DataFrames.

Every function takes `report`'s options by their Python names (`ReadOptions`); the
DataFrame functions take `backend` too: "pandas" (the default), "polars" or "arrow" (a
pyarrow.Table). Errors are `smevals.SmevalsError` with the command line's messages.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any, TypedDict, Unpack

from smevals.analysis import frames, read, tables
from smevals.analysis.results import CheckResult, EvalResults, RunResult
from smevals.errors import SmevalsError
from smevals.history.doc import HistoryDoc

Paths = str | os.PathLike[str] | Iterable[str | os.PathLike[str]] | None


class ReadOptions(TypedDict, total=False):
    """`report`'s options: where to read, which Grades count, which Runs."""

    rev: str | None                 # a git revision: the store as committed there
    grader: str                     # whose Grades count (default "default")
    grader_version: str | None      # the newest Grade of this version (prefix) counts
    any_version: bool               # the newest Grade of any version counts
    include_stale: bool             # count Runs made from an older task, config or runner
    tasks: Iterable[str]            # only these tasks
    models: Iterable[str]           # only these models
    configs: Iterable[str]          # only these configs
    store: str | os.PathLike[str] | None    # the shared results store (`--store`)


class HistoryOptions(TypedDict, total=False):
    """`log`'s options."""

    n: int | None                   # at most this many commits, the newest
    since: str | None               # only the commits after this revision
    first_parent: bool
    grader: str
    include_stale: bool
    tasks: Iterable[str]
    models: Iterable[str]
    configs: Iterable[str]
    store: str | os.PathLike[str] | None


def evals(paths: Paths = None, **options: Unpack[ReadOptions]) -> Iterator[EvalResults]:
    """Each Eval under `paths` (Eval or Suite folders; default "."), read when reached:
    its name, store, commit, the grader version that counts, `summary` (report's counts),
    `damaged` and `notes`; `.runs()` and `.checks()` iterate over it."""
    return read.evals(read.selection(paths, **options))


def runs(paths: Paths = None, **options: Unpack[ReadOptions]) -> Iterator[RunResult]:
    """Every Run matching the filters, with the Grade that counts for it: `counted` is
    True for those `report` counts; the others say why in `left_out`."""
    return read.runs(read.selection(paths, **options))


def checks(paths: Paths = None, **options: Unpack[ReadOptions]) -> Iterator[CheckResult]:
    """Every Check of the Grades whose Checks `report` counts (the counted Grades and the
    errored ones)."""
    return read.checks(read.selection(paths, **options))


def runs_df(paths: Paths = None, *, backend: str = "pandas",
            **options: Unpack[ReadOptions]) -> Any:
    """One row per Run (the `runs` table of docs/analysis.md#columns)."""
    _ready(backend, "runs_df")
    return frames.frame(tables.runs_table(runs(paths, **options)), backend, "runs_df")


def checks_df(paths: Paths = None, *, backend: str = "pandas",
              **options: Unpack[ReadOptions]) -> Any:
    """One row per Check verdict (the `checks` table)."""
    _ready(backend, "checks_df")
    return frames.frame(tables.checks_table(checks(paths, **options)), backend, "checks_df")


def log(paths: Paths = None, **options: Unpack[HistoryOptions]) -> HistoryDoc:
    """`smevals log --format json`'s document (docs/diff.md, "History"). (Not `history`:
    that name is the package smevals.history.)"""
    from smevals.history.load import HistoryOptions as Options
    from smevals.history.load import load_history

    n = options.get("n")
    sel = read.selection(paths, grader=options.get("grader", "default"),
                         include_stale=options.get("include_stale", False),
                         tasks=options.get("tasks", ()), models=options.get("models", ()),
                         configs=options.get("configs", ()), store=options.get("store"))
    if n is not None and (n.__class__ is not int or n < 1):
        raise SmevalsError(f"-n: {n} is not a positive number of commits")
    return load_history(Options(sel.paths, read.log_spec(sel), n, options.get("since"),
                                bool(options.get("first_parent", False))))


def history_df(paths: Paths = None, *, backend: str = "pandas",
               **options: Unpack[HistoryOptions]) -> Any:
    """One row per commit x Eval x config x model of `smevals log` (the `history` table)."""
    _ready(backend, "history_df")
    return frames.frame(tables.history_table(log(paths, **options)), backend,
                        "history_df")


def _ready(backend: str, what: str) -> None:
    """Exit early, before reading anything, on a backend that is unknown or not installed."""
    if backend not in frames.BACKENDS:
        raise SmevalsError(f"backend: '{backend}' is not one of {', '.join(frames.BACKENDS)}")
    frames.need("pyarrow", what)
    frames.need("pandas" if backend == "pandas" else "polars" if backend == "polars"
                else "pyarrow", what)
