"""`smevals gc` (cli/gc_cmd.py): staging leftovers removed, and on request superseded or
errored Grades (grade/evict.py chooses them) and judge cache entries."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from smevals.evaldef.load import display_path
from smevals.evaldef.stores import store_roots
from smevals.store import folders
from smevals.store.layout import STAGING
from smevals.store.read import Store, store_root

if TYPE_CHECKING:
    from smevals.grade.evict import JudgeEviction


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
    from smevals.evaldef.pick import load_evals
    from smevals.grade.version import grader_version

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
