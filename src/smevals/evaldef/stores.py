"""Which stores the paths of a command name, and the one Run or Grade an id prefix names
in them (`smevals show`, `verify`, `gc`, `label`)."""

from __future__ import annotations

from pathlib import Path

from smevals.errors import SmevalsError
from smevals.evaldef.discover import find_evals
from smevals.evaldef.load import display_path
from smevals.files.gitcat import SourceError
from smevals.store.layout import STAGING
from smevals.store.read import MIN_PREFIX, AmbiguousId, AnyObj, Store, UnknownId, store_root


def is_store(path: Path) -> bool:
    return any((path / name).is_dir() for name in ("runs", "grades", STAGING))


def store_roots(paths: tuple[str, ...], store: str | None) -> list[Path]:
    """The stores of the Evals in `paths`. A path that is itself a store counts as one, and a
    folder of stores (a `--store` folder) as each store in it."""
    roots: list[Path] = []
    for arg in paths or (".",):
        path = Path(arg)
        if is_store(path):
            found = [path]
        elif path.is_dir() and not (path / "eval.yaml").exists() and (
                children := _child_stores(path)):
            found = children
        else:
            found = [_eval_store(ev_path, store) for ev_path in find_evals([arg])]
        roots.extend(r for r in found if r not in roots)
    return roots


def _child_stores(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_dir() and is_store(p))


def _eval_store(ev_path: Path, store: str | None) -> Path:
    from smevals.evaldef.load import read_eval

    ev, _problems = read_eval(ev_path)
    return store_root(ev_path, ev.name, store)


def find_object(paths: tuple[str, ...], store: str | None, ident: str,
                rev: str | None = None) -> tuple[Store, AnyObj]:
    """The one Run or Grade `ident` names in the stores of `paths` (exit 2 otherwise)."""
    if len(ident.strip()) < MIN_PREFIX:
        raise SmevalsError(f"an id prefix needs at least {MIN_PREFIX} characters: '{ident}'")
    found: list[tuple[Store, AnyObj]] = []
    damaged = ""
    for root in store_roots(paths, store):
        try:
            st = Store(root, rev)
            found.append((st, st.resolve(ident)))
        except UnknownId as exc:
            damaged = damaged or (str(exc) if " is damaged: " in str(exc) else "")
            continue
        except AmbiguousId as exc:
            raise SmevalsError(_ambiguous(st, exc.prefix, exc.candidates)) from None
        except SourceError as exc:
            raise SmevalsError(str(exc)) from None
    if not found and damaged:
        raise SmevalsError(damaged)
    if not found:
        raise SmevalsError(f"no Run or Grade with id '{ident}' in the stores of "
                           f"{', '.join(paths or ('.',))}")
    if len(found) > 1:
        raise SmevalsError(f"id prefix '{ident}' is ambiguous across stores; candidates:\n"
                           + "\n".join(_candidate(s, o) for s, o in found))
    return found[0]


def _ambiguous(st: Store, prefix: str, candidates: list[AnyObj]) -> str:
    shown = [_candidate(st, o) for o in candidates[:20]]
    if len(candidates) > 20:
        shown.append(f"  ... and {len(candidates) - 20} more")
    return f"id prefix '{prefix}' is ambiguous; candidates:\n" + "\n".join(shown)


def _candidate(st: Store, obj: AnyObj) -> str:
    """One line of an ambiguous id's candidates: kind, id and folder."""
    return f"  {obj.kind} {obj.id}  {display_path(st.path_of(obj))}"
