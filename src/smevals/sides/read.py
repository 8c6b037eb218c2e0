"""Read one side: an Eval's authoring files and store, in the working tree or at a git
revision, with the Grade that counts for every Run chosen and the rows collected
(`smevals.report.rows`). What `report`, `diff`, `build` and `serve` share.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.evaldef.committed import Revision, eval_at, resolve
from smevals.evaldef.discover import find_evals
from smevals.evaldef.load import display_path, load_eval
from smevals.evaldef.model import Eval
from smevals.evaldef.pick import pick_grader
from smevals.files.gitcat import SourceError
from smevals.grade.select import Choice
from smevals.grade.version import grader_version, grading_hash, version_files
from smevals.report.document import ANY, CURRENT, VERSION, EvalReport
from smevals.report.rows import OLDER, STALE, Collected, Filters, collect
from smevals.run import stale
from smevals.store.read import Obj, Store, store_root
from smevals.store.records import GradeBrief

_KEEP: list[object] = [None]       # the sides read last, in a cycle: see `keep`
_KEEP.append(_KEEP)


@dataclass(frozen=True)
class SideSpec:
    """How to read one side: where (rev, store) and which Grades count."""

    grader: str = "default"
    rev: str | None = None
    store: str | None = None
    version: str | None = None        # --grader-version prefix
    any_version: bool = False
    filters: Filters = Filters()
    include_stale: bool = False
    full_records: bool = False        # records in full, not in the brief view (the site)
    full_runs: bool = False           # Runs in full, Grades brief (smevals.analysis: usage)


@dataclass
class Side:
    report: EvalReport
    store: Store | None       # None: the Eval, or its store, is absent on this side
    ev: Eval | None
    choice: Choice | None = None    # which Grade counts for a Run on this side


class NoStore(SmevalsError):
    """The Eval has no store at that revision."""


def keep(value: object) -> None:
    """Hold what was read (only the last value): in a big report, hundreds of thousands of
    records that would take about a tenth of the command's time to free one by one at the
    end. `_KEEP` refers to itself, so only the cyclic GC could free it, and after loading a
    big store `gc_paused` freezes it out of every later collection, the one at exit
    included. Measured at 100,000 Runs and Grades: 1.84 s of CPU against 2.07 s freeing
    them (docs/performance.md)."""
    _KEEP[0] = value


def load_sides(paths: tuple[str, ...], spec: SideSpec) -> list[Side]:
    """One Side per Eval under `paths`; exit 2 when there is nothing to report."""
    folders = find_evals(list(paths))
    with tempfile.TemporaryDirectory(prefix="smevals-rev-") as tmp:
        sides = [load_side(folder, spec, Path(tmp)) for folder in folders]
    check_found(sides, spec)
    return sides


def check_found(sides: list[Side], spec: SideSpec) -> None:
    """Exit 2 when no side has a Run (matching the filters): nothing to report."""
    if any(side.report.collected.runs for side in sides):
        return
    where = ", ".join(side.report.store for side in sides)
    if spec.filters.describe() and any(side.store and side.store.runs(brief=True)
                                       for side in sides):
        raise SmevalsError(f"no Runs match {spec.filters.describe()} in {where}")
    raise SmevalsError(f"no Runs in {where}")


@dataclass(frozen=True)
class Opened:
    """One Eval's authoring files and store, on one side (working tree or revision)."""

    folder: Path
    ev: Eval
    store: Store
    revision: Revision | None


def open_side(folder: Path, rev: str | None, store_opt: str | None, tmp: Path) -> Opened:
    """The Eval and its store."""
    revision = resolve(folder, rev) if rev else None
    ev = _eval(folder, store_opt, revision, tmp)
    root = store_root(folder, ev.name, store_opt)
    return Opened(folder, ev, store_at(root, revision), revision)


def load_side(folder: Path, spec: SideSpec, tmp: Path) -> Side:
    """Read one Eval's store on one side and collect its rows."""
    return report_side(open_side(folder, spec.rev, spec.store, tmp), spec)


def report_side(opened: Opened, spec: SideSpec) -> Side:
    """Choose the Grades that count under `spec` and collect the rows."""
    ev, store, revision = opened.ev, opened.store, opened.revision
    try:
        grader = pick_grader(ev, spec.grader)
    except SmevalsError as exc:
        if revision is None:
            raise
        raise SmevalsError(f"{exc} (at revision {revision.label()})") from None
    current = grader_version(grader)
    choice, kind, shown = _choice(ev, spec, current)
    try:
        brief = not spec.full_records
        store.note_orphans(brief)
        runs = store.runs(brief=brief and not spec.full_runs)
        grades = store.grades(brief=brief)
    except SourceError as exc:
        raise SmevalsError(f"cannot read {store.source.label}: {exc}") from None
    staleness = stale.Staleness(ev)
    collected = collect(runs, grades, choice, spec.filters, staleness.expected,
                        spec.include_stale)
    label = display_path(store.root)
    report = EvalReport(
        name=ev.name, path=display_path(opened.folder),
        store=f"{revision.rev}:{label}" if revision else label,
        grader=grader.name, version=shown, choice=kind, collected=collected,
        rev=revision.rev if revision else None, commit=revision.commit if revision else None,
        current=current, tasks=frozenset(t.name for t in ev.tasks),
        configs=frozenset(ev.configs), files=version_files(grader) if kind == CURRENT else {})
    report.stale.update(staleness.count([((e.task, e.config, e.model), e.run)
                                         for e in collected.excluded if e.reason == STALE]))
    report.notes.extend(_notes(store, report, grades))
    report.damaged = [{"path": rel, "problem": str(why)} for rel, why in store.broken]
    return Side(report, store, ev, choice)


def _eval(folder: Path, store_opt: str | None, revision: Revision | None, tmp: Path) -> Eval:
    if revision is None:
        return load_eval(folder)
    return eval_at(folder, revision, store_root(folder, "", None) if not store_opt else None,
                   tmp, files_of)


def programs_of(ev: Eval) -> list[tuple[Path, str]]:
    """The programs an Eval names that are not built in (runner and checker programs,
    replay responses), each with the folder a relative path is taken from."""
    from smevals import checkers
    from smevals.runners import builtin_name

    wanted = [(c.path.parent, c.runner) for c in ev.configs.values()
              if builtin_name(c.runner) is None]
    wanted += [(c.path.parent, str(c.doc["responses"])) for c in ev.configs.values()
               if builtin_name(c.runner) == "replay" and isinstance(c.doc.get("responses"), str)]
    wanted += [(g.path.parent, check.checker) for g in ev.graders.values()
               for check in g.checks if not checkers.is_builtin(check.checker)]
    return wanted


def data_files_of(ev: Eval) -> list[tuple[Path, str]]:
    """The data files the Eval's graders name by path (an SQL Check's `database`, a judge's
    `template_file`), each with the folder it is relative to (the grader's). Part of the
    grader version (grade/version.py), so at a revision they are read as committed there."""
    from smevals import checkers

    out = []
    for grader in ev.graders.values():
        for check in grader.checks:
            name = checkers.canonical_name(check.checker)
            for option in (checkers.GRADER_FILES.get(name), "template_file"):
                value = check.options.get(option) if option else None
                if isinstance(value, str) and value.strip():
                    out.append((grader.path.parent, value))
    return out


def files_of(ev: Eval) -> list[tuple[Path, str]]:
    """Every file an Eval names by path that a revision must hold as committed: its programs
    (`programs_of`) and its graders' data files, a bare data file name taken as a path
    beside its grader (never looked up on PATH)."""
    data = [(base, name if "/" in name or "\\" in name else f"./{name}")
            for base, name in data_files_of(ev)]
    return programs_of(ev) + data


def store_at(root: Path, revision: Revision | None) -> Store:
    """The store at `root`: in the working tree, or as committed at `revision` (NoStore
    when there is none there)."""
    if revision is None:
        return Store(root)
    try:
        store = Store(root, revision.commit)
        empty = store.source.empty()
    except SourceError as exc:
        raise SmevalsError(str(exc)) from None
    if empty:
        raise NoStore(f"no store at {display_path(root)} in revision {revision.label()}")
    return store


def absent(other: Side | None, folder: Path, rev: str | None, has_eval: bool) -> Side:
    """An empty side for an Eval that is absent on that side (`has_eval` False: added or
    removed in a Suite) or whose store has no Runs there yet."""
    commit = resolve(folder, rev).commit if rev else None
    name = other.report.name if other else folder.name
    grader = other.report.grader if other else ""
    report = EvalReport(name=name, path=display_path(folder), store="-", grader=grader,
                        version="-", choice=CURRENT, collected=Collected(), rev=rev,
                        commit=commit, tasks=frozenset(), configs=frozenset(),
                        present=has_eval)
    return Side(report, None, None)


def check_versions(pair: tuple[Side, Side], *prefixes: str) -> None:
    """Exit 2 when a grader version prefix given to `diff --grader-versions` matches no
    Grade, naming the versions that do exist."""
    side = pair[0]
    assert side.store is not None
    grader = side.report.grader
    found = sorted(_versions(side.store.grades(brief=True), grader))
    missing = [p for p in prefixes if not any(v.startswith(p) for v in found)]
    if missing:
        raise SmevalsError(f"{side.report.path}: no Grade of grader '{grader}' has version "
                           f"{' or '.join(missing)}; versions in {side.report.store}: "
                           f"{', '.join(found) or 'none'}")


def _choice(ev: Eval, spec: SideSpec, current: str) -> tuple[Choice, str, str]:
    if spec.any_version:
        return Choice(spec.grader, None, any_version=True), ANY, current
    if spec.version:
        return Choice(spec.grader, spec.version), VERSION, spec.version
    return current_choice(ev, spec.grader, current), CURRENT, current


def current_choice(ev: Eval, grader: str, current: str) -> Choice:
    """The newest Grade of `grader`'s `current` version and the Tasks' current answer keys
    counts (what `report` counts by default)."""
    grading = {t.name: grading_hash(dict(t.grading)) for t in ev.tasks}
    return Choice(grader, current, grading)


def _notes(store: Store, report: EvalReport, grades: list[Obj[GradeBrief]]) -> list[str]:
    notes = []
    if store.broken:
        notes.append(f"{len(store.broken)} damaged object(s) left out, nothing in them counted "
                     "(see `smevals verify`)")
    c = report.collected
    cut = sum(1 for run in c.runs if run.record.get("truncated"))
    if cut:
        notes.append(f"{cut} run(s) wrote more output than the cap and were cut (output.txt "
                     "or stderr.txt; the config key max_output_bytes raises the cap)")
    if not c.rows and c.count(OLDER):
        found = _versions(grades, report.grader)
        listed = ", ".join(f"{v} ({n})" for v, n in sorted(found.items()))
        notes.append(f"no Grade counts for version {report.version}; versions in the store: "
                     f"{listed} (see --grader-version and --any-version)")
    return notes


def _versions(grades: list[Obj[GradeBrief]], grader: str) -> Counter[str]:
    """How many of `grades` are of each version of `grader`."""
    return Counter(str(g.record.get("grader", {}).get("version")) for g in grades
                   if g.record.get("grader", {}).get("name") == grader)
