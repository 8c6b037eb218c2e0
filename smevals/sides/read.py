"""`smevals report`: read each Eval's store (in the working tree or at a git revision),
choose the Grade that counts for every Run, and render the report in one format.

`load_side` is shared with `smevals diff`: one Eval, one side (working tree or revision).
"""

from __future__ import annotations

import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.grade.select import Choice
from smevals.grade.version import grader_version, grading_hash, version_files
from smevals.report import formats, gates, markdown, taskpass
from smevals.report.document import ANY, CURRENT, VERSION, EvalReport, Settings, generated_at
from smevals.report.rows import OLDER, STALE, Collected, Expected, Filters, Want, collect
from smevals.run import stale
from smevals.run.plan import Runner, inputs_of, resolve_runner
from smevals.spec.committed import Revision, eval_at, resolve
from smevals.spec.discover import find_evals
from smevals.spec.load import display_path, load_eval
from smevals.spec.model import Eval
from smevals.spec.pick import pick_grader
from smevals.store.base import SourceError
from smevals.store.index import gc_paused
from smevals.store.read import Obj, Store, store_root
from smevals.store.records import GradeBrief

FORMATS = ("markdown", "json", "csv", "junit")
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


@dataclass(frozen=True)
class ReportOptions:
    paths: tuple[str, ...]
    side: SideSpec = SideSpec()
    fmt: str = "markdown"
    by_task: bool = False
    fail_under: str | None = None
    min_pass_rate: str | None = None
    allow_incomplete: bool = False
    task_pass: str = taskpass.DEFAULT


@dataclass
class ReportResult:
    text: str
    gate_failures: list[str]


@dataclass
class Side:
    report: EvalReport
    store: Store | None       # None: the Eval, or its store, is absent on this side
    ev: Eval | None


class NoStore(SmevalsError):
    """The Eval has no store at that revision."""


def report_command(opts: ReportOptions) -> ReportResult:
    with gc_paused():
        return _report(opts)


def _report(opts: ReportOptions) -> ReportResult:
    if opts.fmt not in FORMATS:
        raise SmevalsError(f"--format: '{opts.fmt}' is not one of {', '.join(FORMATS)}")
    if opts.task_pass not in taskpass.RULES:
        raise SmevalsError(f"--task-pass: '{opts.task_pass}' is not one of "
                           f"{', '.join(taskpass.RULES)}")
    if opts.side.version and opts.side.any_version:
        raise SmevalsError("--grader-version and --any-version exclude each other")
    try:
        limits = gates.Gates(gates.parse_score(opts.fail_under),
                             gates.parse_rate(opts.min_pass_rate), opts.allow_incomplete)
    except gates.GateError as exc:
        raise SmevalsError(str(exc)) from None
    sides = load_sides(opts.paths, opts.side)
    keep(sides)
    reports = [side.report for side in sides]
    failures = gates.check(limits, reports)
    settings = Settings(generated_at(), opts.by_task, opts.task_pass)
    text = _render(opts, reports, settings, limits, failures)
    return ReportResult(text, failures)


def keep(value: object) -> None:
    """Hold what was read (only the last value): in a big report, hundreds of thousands of
    records that would take about a tenth of the command's time to free one by one at the
    end. `_KEEP` refers to itself, so only the cyclic GC could free it, and after loading a
    big store `gc_paused` freezes it out of every later collection, the one at exit
    included. Measured at 100,000 Runs and Grades: 1.84 s of CPU against 2.07 s freeing
    them (docs/performance.md)."""
    _KEEP[0] = value


def _render(opts: ReportOptions, reports: list[EvalReport], settings: Settings,
            limits: gates.Gates, failures: list[str]) -> str:
    if opts.fmt == "json":
        extra = {"rev": opts.side.rev, "filters": _filters_json(opts.side.filters),
                 "gates": {**limits.as_dict(), "passed": not failures, "failures": failures}}
        return formats.to_json(reports, settings, extra)
    if opts.fmt == "csv":
        return formats.to_csv(reports)
    if opts.fmt == "junit":
        return formats.to_junit(reports, opts.task_pass)
    return markdown.render(reports, settings, opts.side.filters.describe())


def _filters_json(filters: Filters) -> dict[str, list[str]]:
    return {"tasks": list(filters.tasks), "models": list(filters.models),
            "configs": list(filters.configs)}


def load_sides(paths: tuple[str, ...], spec: SideSpec) -> list[Side]:
    """One Side per Eval under `paths`; exit 2 when there is nothing to report."""
    folders = find_evals(list(paths))
    with tempfile.TemporaryDirectory(prefix="smevals-rev-") as tmp:
        sides = [load_side(folder, spec, Path(tmp)) for folder in folders]
    _check_found(sides, spec)
    return sides


def _check_found(sides: list[Side], spec: SideSpec) -> None:
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
    return Opened(folder, ev, _store(root, revision), revision)


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
        runs, grades = store.runs(brief=brief), store.grades(brief=brief)
    except SourceError as exc:
        raise SmevalsError(f"cannot read {store.source.label}: {exc}") from None
    collected = collect(runs, grades, choice, spec.filters, stale_check(ev), spec.include_stale)
    label = display_path(store.root)
    report = EvalReport(
        name=ev.name, path=display_path(opened.folder),
        store=f"{revision.rev}:{label}" if revision else label,
        grader=grader.name, version=shown, choice=kind, collected=collected,
        rev=revision.rev if revision else None, commit=revision.commit if revision else None,
        current=current, tasks=frozenset(t.name for t in ev.tasks),
        configs=frozenset(ev.configs), files=version_files(grader) if kind == CURRENT else {})
    report.stale.update(stale.count(ev, [((e.task, e.config, e.model), e.run)
                                         for e in collected.excluded if e.reason == STALE]))
    report.notes.extend(_notes(store, report, grades))
    report.damaged = [{"path": rel, "problem": str(why)} for rel, why in store.broken]
    return Side(report, store, ev)


def _eval(folder: Path, store_opt: str | None, revision: Revision | None, tmp: Path) -> Eval:
    if revision is None:
        return load_eval(folder)
    return eval_at(folder, revision, store_root(folder, "", None) if not store_opt else None,
                   tmp)


def _store(root: Path, revision: Revision | None) -> Store:
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
    found = sorted({str(g.record.get("grader", {}).get("version"))
                    for g in side.store.grades(brief=True)
                    if g.record.get("grader", {}).get("name") == grader})
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
    grading = {t.name: grading_hash(dict(t.grading)) for t in ev.tasks}
    return Choice(spec.grader, current, grading), CURRENT, current


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
        found = Counter(str(g.record.get("grader", {}).get("version")) for g in grades
                        if g.record.get("grader", {}).get("name") == report.grader)
        listed = ", ".join(f"{v} ({n})" for v, n in sorted(found.items()))
        notes.append(f"no Grade counts for version {report.version}; versions in the store: "
                     f"{listed} (see --grader-version and --any-version)")
    return notes


def stale_check(ev: Eval) -> Expected:
    """What a current Run of each (task, config, model) has as inputs; None when the task or
    config no longer exists (its Runs are all stale). When the config's runner cannot be
    found here, only the task and config hashes are compared."""
    tasks = {t.name: t for t in ev.tasks}
    runners: dict[str, Runner | None] = {}
    memo: dict[tuple[str, str, str], Want | None] = {}

    def expected(cell: tuple[str, str, str]) -> Want | None:
        if cell not in memo:
            memo[cell] = _expected(*cell)
        return memo[cell]

    def _expected(task_name: str, config_name: str, model: str) -> Want | None:
        task, config = tasks.get(task_name), ev.configs.get(config_name)
        if task is None or config is None:
            return None
        if config_name not in runners:
            try:
                runners[config_name] = resolve_runner(config)
            except (SmevalsError, OSError):
                runners[config_name] = None
        runner = runners[config_name]
        if runner is None:
            parts = inputs_of(task, config, Runner(None, None, "", ""), model)
            return (("task", parts["task"]), ("config", parts["config"]))
        return (("hash", inputs_of(task, config, runner, model)["hash"]),)

    return expected
