"""The Evals a history is about: those in the working tree (as `report` finds them), and,
with `--all` or for a path that holds none now, those the history of HEAD deleted (or
moved away): every folder whose eval.yaml a commit of the range deleted, found by one `git
log` and kept when no Eval is there now. Such an Eval is listed up to the commit that
deleted it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.evaldef.discover import SKIP_DIRS, evals_under, find_evals
from smevals.files.gitcat import SourceError, git, repo_and_prefix

NOT_SEARCHED = SKIP_DIRS | {"runs", "grades"}    # runs/, grades/: a store's own folders
GLOB = re.compile(r"([*?\[\\])")      # a glob pathspec's special characters


def find_folders(paths: tuple[str, ...], every: bool, since: str | None,
                 first_parent: bool) -> list[Path]:
    """Every Eval folder of `paths`, in argument order then sorted path order, without
    repeats (exit 2 for a path that holds none now nor in the history)."""
    found: list[Path] = []
    for arg in paths:
        path = Path(arg)
        here = evals_under(path) if path.is_dir() else []
        gone: list[Path] = []
        if every or not here:
            gone = [f for f in deleted_under(path, since, first_parent) if f not in here]
        if not here and not gone:
            if path.exists():
                find_evals([arg])               # says why this is no Eval nor Suite
            raise SmevalsError(f"{arg}: no such file or folder, and no Eval was deleted "
                               "from it in the history of HEAD")
        found.extend(f for f in sorted(here + gone) if f not in found)
    return found


def deleted_under(path: Path, since: str | None, first_parent: bool) -> list[Path]:
    """The Eval folders in or below `path` whose eval.yaml a commit of HEAD (after `since`)
    deleted, and that hold no eval.yaml now."""
    try:
        repo, prefix = repo_and_prefix(path.absolute(), path)
        pattern = GLOB.sub(r"\\\1", prefix) + "/**/eval.yaml" if prefix else "**/eval.yaml"
        limits = ["HEAD"] + ([f"^{since}"] if since else [])
        out = git(repo, "log", "-z", "--format=", "--name-only", "--no-renames",
                  "--diff-filter=D", *(["--first-parent"] if first_parent else []),
                  "--end-of-options", *limits, "--", f":(glob){pattern}",
                  what="git log", detail=False)
    except SourceError:
        return []                               # not in git, no commit: nothing deleted
    folders = set()
    for raw in out.split(b"\0"):
        rel = os.path.dirname(raw.decode("utf-8", "surrogateescape"))
        parts = rel.split("/") if rel else []
        if raw and not any(p.startswith(".") or p in NOT_SEARCHED for p in parts):
            folders.add(rel)
    shown = [Path(os.path.normpath(path / os.path.relpath(rel or ".", prefix or ".")))
             for rel in folders]
    return sorted(f for f in shown if not (f / "eval.yaml").is_file())
