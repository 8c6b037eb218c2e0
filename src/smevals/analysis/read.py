"""Reading Evals as `report` reads them, lazily: one Eval at a time, in the working tree or
at a git revision (`smevals.sides`), each Run made a `RunResult` as it is asked for.

The arguments are `report`'s options by their Python names; an error is a `SmevalsError`
with the message the command line prints (and exit code 2 there)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from smevals.analysis.results import CheckResult, EvalResults, RunResult
from smevals.errors import SmevalsError
from smevals.evaldef.discover import find_evals
from smevals.report.rows import Filters
from smevals.sides.read import Side, SideSpec, check_found, load_side
from smevals.store.index import gc_paused

PathArg = str | os.PathLike[str]


@dataclass(frozen=True)
class Selection:
    """What to read, and which Grades count: `report`'s options."""

    paths: tuple[str, ...] = (".",)
    rev: str | None = None
    grader: str = "default"
    grader_version: str | None = None
    any_version: bool = False
    include_stale: bool = False
    tasks: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    configs: tuple[str, ...] = ()
    store: str | None = None

    @property
    def spec(self) -> SideSpec:
        return SideSpec(self.grader, self.rev, self.store, self.grader_version,
                        self.any_version, Filters(self.tasks, self.models, self.configs),
                        self.include_stale, full_runs=True)


def log_spec(sel: Selection) -> SideSpec:
    """How `log` reads each commit with these options (the same cache as `smevals log`)."""
    return SideSpec(sel.grader, None, sel.store,
                    filters=Filters(sel.tasks, sel.models, sel.configs),
                    include_stale=sel.include_stale)


def selection(paths: PathArg | Iterable[PathArg] | None = None, *, rev: str | None = None,
              grader: str = "default", grader_version: str | None = None,
              any_version: bool = False, include_stale: bool = False,
              tasks: Iterable[str] = (), models: Iterable[str] = (),
              configs: Iterable[str] = (), store: PathArg | None = None) -> Selection:
    """A Selection from the API's arguments, checked as the command line checks them."""
    if grader_version and any_version:
        raise SmevalsError("--grader-version and --any-version exclude each other")
    names = {"tasks": _names(tasks, "tasks"), "models": _names(models, "models"),
             "configs": _names(configs, "configs")}
    if any(not name.strip() for name in names["models"]):
        raise SmevalsError("--model: a name cannot be empty")
    return Selection(_paths(paths), rev or None, grader, grader_version or None, any_version,
                     include_stale, names["tasks"], names["models"], names["configs"],
                     os.fspath(store) if store is not None else None)


def _paths(paths: PathArg | Iterable[PathArg] | None) -> tuple[str, ...]:
    if paths is None:
        return (".",)
    if isinstance(paths, str | os.PathLike):
        return (os.fspath(paths),)
    out = tuple(os.fspath(p) for p in paths)
    return out or (".",)


def _names(values: Iterable[str], what: str) -> tuple[str, ...]:
    if isinstance(values, str):
        return (values,)
    out = tuple(values)
    if not all(isinstance(v, str) for v in out):
        raise SmevalsError(f"{what}: expected names (strings), got {out!r:.80}")
    return out


def evals(sel: Selection) -> Iterator[EvalResults]:
    """Each Eval under `sel.paths`, read when it is reached. The folders are found now (a
    missing one raises here); when no Eval has a matching Run, the end of the iteration
    raises as `report` exits: `no Runs in ...`."""
    folders = find_evals(list(sel.paths))
    return _each(folders, sel.spec)


def _each(folders: list[Path], spec: SideSpec) -> Iterator[EvalResults]:
    empty: list[Side] = []          # sides without a matching Run, while no side has one
    found = False
    with tempfile.TemporaryDirectory(prefix="smevals-rev-") as tmp:
        for folder in folders:
            with gc_paused():
                side = load_side(folder, spec, Path(tmp))
            if side.report.collected.runs:
                found = True
                empty.clear()
            elif not found:
                empty.append(side)
            yield EvalResults(side.report)
    if not found:
        check_found(empty, spec)


def runs(sel: Selection) -> Iterator[RunResult]:
    """Every matching Run of every Eval, Eval by Eval."""
    return (run for ev in evals(sel) for run in ev.runs())


def checks(sel: Selection) -> Iterator[CheckResult]:
    """Every Check of the Grades whose Checks count, Eval by Eval."""
    return (check for ev in evals(sel) for check in ev.checks())
