"""Find Evals: a folder with eval.yaml is an Eval; any other folder is a Suite, searched
recursively."""

from __future__ import annotations

import os
from pathlib import Path

from smevals.errors import SmevalsError

SKIP_DIRS = frozenset({"node_modules", "__pycache__"})


def find_evals(paths: list[str] | tuple[str, ...]) -> list[Path]:
    """Every Eval folder in `paths`, in argument order then sorted path order, without repeats."""
    found: list[Path] = []
    for arg in paths:
        path = Path(arg)
        if not path.exists():
            raise SmevalsError(f"{arg}: no such file or folder")
        if not path.is_dir():
            raise SmevalsError(
                f"{arg} is not an Eval or a Suite (expected a folder with eval.yaml)")
        evals = evals_under(path)
        if not evals:
            raise SmevalsError(
                f"{arg} is not an Eval or a Suite: no eval.yaml in it or in any folder below it"
            )
        found.extend(e for e in evals if e not in found)
    return found


def evals_under(path: Path) -> list[Path]:
    """The Eval folders in `path` (itself, or searched recursively; none when missing)."""
    if (path / "eval.yaml").is_file():
        return [path]
    if _is_store(path):
        return []
    out: list[Path] = []
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return out
    for entry in entries:
        if entry.name.startswith(".") or entry.name in SKIP_DIRS:
            continue
        if entry.is_dir(follow_symlinks=False):
            out.extend(evals_under(Path(entry.path)))
    return out


def _is_store(path: Path) -> bool:
    return (path / "runs").is_dir() or (path / "grades").is_dir()
