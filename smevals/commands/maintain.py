"""`smevals verify`, `smevals show` and `smevals gc`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smevals.errors import SmevalsError
from smevals.spec.discover import find_evals
from smevals.spec.load import display_path
from smevals.store.objects import RECORD_NAMES
from smevals.store.sources import SourceError
from smevals.store.store import AmbiguousId, Obj, Store, UnknownId, store_root
from smevals.store.verify import Damage, verify_store


def store_roots(paths: tuple[str, ...], store: str | None) -> list[Path]:
    """The stores of the Evals in `paths`; a path that is itself a store counts as one."""
    roots: list[Path] = []
    for arg in paths or (".",):
        path = Path(arg)
        if (path / "runs").is_dir() or (path / "grades").is_dir() or (path / ".staging").is_dir():
            roots.append(path)
            continue
        for ev_path in find_evals([arg]):
            from smevals.spec.load import read_eval

            ev, _problems = read_eval(ev_path)
            roots.append(store_root(ev_path, ev.name, store))
    return roots


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


def find_object(paths: tuple[str, ...], store: str | None, ident: str,
                rev: str | None = None) -> tuple[Store, Obj]:
    found: list[tuple[Store, Obj]] = []
    for root in store_roots(paths, store):
        st = Store(root, rev)
        try:
            found.append((st, st.resolve(ident)))
        except UnknownId:
            continue
        except AmbiguousId as exc:
            raise SmevalsError(str(exc)) from None
        except SourceError as exc:
            raise SmevalsError(str(exc)) from None
    if not found:
        raise SmevalsError(f"no Run or Grade with id '{ident}' in the stores of "
                           f"{', '.join(paths or ('.',))}")
    if len(found) > 1:
        raise SmevalsError(f"id prefix '{ident}' is ambiguous across stores: " + ", ".join(
            display_path(s.path_of(o)) for s, o in found))
    return found[0]


def show_object(st: Store, obj: Obj, name: str | None) -> tuple[dict[str, Any] | None, bytes]:
    """(record, b"") to show an object, or (None, content) of one of its files."""
    if name is None:
        return obj.record, b""
    listed = {f["path"] for f in obj.record.get("files", [])} | {RECORD_NAMES[obj.kind]}
    if name not in listed:
        raise SmevalsError(f"{obj.kind} {obj.id} has no file '{name}'; files: "
                           + ", ".join(sorted(listed)))
    try:
        return None, st.read_file(obj, name)
    except OSError as exc:
        raise SmevalsError(f"cannot read {name}: {exc}") from None


@dataclass
class GcReport:
    removed: list[str] = field(default_factory=list)


def gc_command(paths: tuple[str, ...], store: str | None, dry_run: bool, superseded: bool,
               grace: float) -> GcReport:
    from smevals.store.gc import remove, stale_staging

    report = GcReport()
    targets: list[tuple[Path, str]] = []
    for root in store_roots(paths, store):
        targets += [(p, "staging leftover") for p in stale_staging(root, grace)]
    if superseded:
        targets += _superseded(paths, store)
    for path, why in targets:
        report.removed.append(f"{'would remove' if dry_run else 'removed'} {why}: "
                              f"{display_path(path)}")
        if not dry_run:
            remove(path)
    return report


def _superseded(paths: tuple[str, ...], store: str | None) -> list[tuple[Path, str]]:
    """Grades whose grader version is not the current one of a grader that still exists."""
    from smevals.commands.common import load_evals
    from smevals.grade.version import grader_version

    out = []
    for ev in load_evals(paths or (".",)):
        current = {name: grader_version(g) for name, g in ev.graders.items()}
        st = Store(store_root(ev.path, ev.name, store))
        for grade in st.grades():
            info = grade.record.get("grader", {})
            name, version = info.get("name"), info.get("version")
            if name in current and version != current[name]:
                out.append((st.path_of(grade), f"superseded Grade (grader {name} {version})"))
    return out
