"""Commits that changed an Eval's folder but neither its authoring files nor its results: a
README, notes, a picture beside the Tasks. Such a commit is listed as what it is (its
files named), never with the previous commit's figures repeated as if they were new
(docs/decisions.md, "History: a commit that changed only other files").

A commit is quiet for an Eval when, against the previous listed commit of that Eval:

- none of the files that changed is in the Eval's store (no Run or Grade was added,
  removed or changed: a regrade with the same outcomes is still a change of results);
- none is an authoring file: `eval.yaml`, anything under `tasks/`, `configs/` or
  `graders/` (fixtures included), or a file a grader version covers (a checker program, a
  module it imports, a `depends:` file: `point.Identity`'s files);
- every config x model has the same figures (Runs, passes, scores, grader version, damage)
  and the same identity (grader version, Tasks without their answer keys, configs,
  runners), so nothing anywhere else (a Task's starting files, a runner beside the Eval)
  moved a figure or a mark either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smevals.files.gitcat import SourceError, git
from smevals.history.point import Point

AUTHORING = ("eval.yaml", "tasks", "configs", "graders")
FIGURES = ("eval", "config", "model", "runs", "graded", "passed", "failed", "scored", "mean",
           "stderr", "pass_rate", "grader_version", "damage")


class Quiet:
    """Which (commit, Eval) pairs changed only files that change no figure."""

    def __init__(self, repo: Path, paths: dict[Path, list[str]], store: str | None):
        self.repo = repo
        self.paths = paths              # per Eval folder: its folder and store, in the repo
        self.store = store              # --store, else the Eval's own `results`

    def files(self, folder: Path, before: tuple[str, Point], now: tuple[str, Point]
              ) -> list[str] | None:
        """The files (relative to the repository) that changed from `before` to `now` when
        that is all that changed; None when the commit changed figures, marks or results
        (or git cannot say)."""
        (old, was), (new, point) = before, now
        if not (was["present"] and point["present"]) or _figures(was) != _figures(point) \
                or was["identities"] != point["identities"] or was["notes"] != point["notes"]:
            return None
        prefixes = self.paths.get(folder, [])
        try:
            out = git(self.repo, "diff-tree", "-r", "--no-commit-id", "--name-only", "-z",
                      "--no-renames", old, new, "--", *(f":(literal){p}" if p else ":/"
                                                      for p in prefixes), what="git diff-tree")
        except SourceError:
            return None
        changed = [p.decode("utf-8", "replace") for p in out.split(b"\0") if p]
        if not prefixes or not changed:
            return None
        stores = prefixes[1:] if self.store else [_join(prefixes[0], "results")]
        named = {name for identity in point["identities"] for name in identity["files"]}
        kept = stores + [_join(prefixes[0], name) for name in (*AUTHORING, *named)]
        if any(_under(p, k) for p in changed for k in kept):
            return None
        return changed


def _figures(point: Point) -> list[tuple[Any, ...]]:
    return [tuple(row.get(k) for k in FIGURES) for row in point["rows"]]


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


def _under(path: str, folder: str) -> bool:
    return not folder or path == folder or path.startswith(folder + "/")
