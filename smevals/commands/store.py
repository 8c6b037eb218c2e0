"""`smevals verify`, `smevals show` and `smevals gc` (cli/store_cmd.py); which stores the
paths name, and the object an id names in them, is smevals.spec.stores."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals.errors import SmevalsError
from smevals.spec.load import display_path
from smevals.spec.stores import store_roots
from smevals.store import folders
from smevals.store.base import SourceError
from smevals.store.layout import RECORD_NAMES, STAGING
from smevals.store.read import AnyObj, Obj, Store, store_root
from smevals.store.records import GradeRecord, RunRecord
from smevals.store.verify import Damage, verify_store

if TYPE_CHECKING:
    from smevals.grade.evict import JudgeEviction


@dataclass
class VerifyReport:
    checked: int = 0
    problems: list[tuple[Path, Damage]] = field(default_factory=list)


def verify_command(paths: tuple[str, ...], store: str | None, rev: str | None) -> VerifyReport:
    report = VerifyReport()
    for root in store_roots(paths, store):
        if not root.exists() and not rev:
            continue
        try:
            count, problems = verify_store(root, rev)
        except SourceError as exc:
            raise SmevalsError(str(exc)) from None
        report.checked += count
        report.problems.extend((root, p) for p in problems)
    return report


def show_object(st: Store, obj: AnyObj,
                name: str | None) -> tuple[RunRecord | GradeRecord | None, bytes]:
    """(record, record bytes) to show an object, or (None, content) of one of its files."""
    record_name = RECORD_NAMES[obj.kind]
    if name is None:
        return obj.record, _read(st, obj, record_name)
    listed = {f.get("path") for f in obj.record.get("files", []) if isinstance(f, dict)}
    if name not in listed | {record_name}:
        raise SmevalsError(f"{obj.kind} {obj.id} has no file '{name}'; files: "
                           + ", ".join(sorted(str(p) for p in listed | {record_name})))
    return None, _read(st, obj, name)


def _read(st: Store, obj: Obj[Any], name: str) -> bytes:
    try:
        return st.read_file(obj, name)
    except (OSError, SourceError) as exc:
        raise SmevalsError(f"cannot read {name} of {obj.kind} {obj.id}: {exc}") from None


def object_location(st: Store, obj: Obj[Any]) -> str:
    where = display_path(st.path_of(obj))
    return f"{st.rev}:{where}" if st.rev else where


@dataclass
class GcReport:
    removed: list[str] = field(default_factory=list)


def gc_command(paths: tuple[str, ...], store: str | None, dry_run: bool, superseded: bool,
               grace: float, errored: bool = False,
               judge: JudgeEviction | None = None) -> GcReport:
    """Remove staging leftovers; with `superseded` Grades of older grader versions and
    errored Grades a verdict replaced; with `errored` only the latter; with `judge` (an
    evict.JudgeEviction) the judge cache entries it selects."""
    from smevals.grade.evict import errored_targets, judge_targets
    from smevals.store.gc import remove, stale_staging_reasons

    report = GcReport()
    targets: list[tuple[Path, Path, str]] = []
    roots = store_roots(paths, store)
    for root in roots:
        folders.refuse_links(root)      # nothing is removed through a linked store folder
    for root in roots:
        targets += [(root, p, f"staging leftover ({why})")
                    for p, why in stale_staging_reasons(root, grace)]
    if superseded:
        targets += _superseded(paths, store)
    for root in roots if superseded or errored else []:
        targets += errored_targets(root) if root.exists() else []
    for root in roots if judge is not None else []:
        targets += judge_targets(root, judge) if judge is not None and root.exists() else []
    unique: dict[Path, tuple[Path, Path, str]] = {}
    for target in targets:                  # an errored Grade of an older version: once
        unique.setdefault(target[1], target)
    targets = list(unique.values())
    for root, path, why in targets:
        if not dry_run and not remove(path):
            continue                            # a live process took it meanwhile
        report.removed.append(f"{'would remove' if dry_run else 'removed'} {why}: "
                              f"{display_path(path)}")
        if not dry_run:
            _prune_empty(root, path.parent)
    return report


def _prune_empty(root: Path, folder: Path) -> None:
    """Remove the folders a removed Grade (or cache entry) leaves empty, up to its kind
    folder."""
    stop = {root.absolute(), (root / "runs").absolute(), (root / "grades").absolute(),
            (root / STAGING).absolute(), (root / "judges").absolute()}
    while folder.absolute() not in stop and folder.absolute() != folder.absolute().parent:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _superseded(paths: tuple[str, ...], store: str | None) -> list[tuple[Path, Path, str]]:
    """Grades whose grader version is not the current one of a grader that still exists."""
    from smevals.grade.version import grader_version
    from smevals.spec.pick import load_evals

    out = []
    for ev in load_evals(paths or (".",)):
        current = {name: grader_version(g) for name, g in ev.graders.items()}
        root = store_root(ev.path, ev.name, store)
        st = Store(root)
        for grade in st.grades():
            info = grade.record.get("grader", {})
            name, version = info.get("name"), info.get("version")
            if name in current and version != current[name]:
                out.append((root, st.path_of(grade),
                            f"superseded Grade (grader {name} version {str(version)[:12]})"))
    return out
