"""Which commits a history lists: every commit of the range that changed an Eval's folder
(its authoring files and its store, and the store given by --store), and every commit that
changed a file outside the folder which the Eval, as committed there, names (a shared
runner or checker program, a database: states.py). A commit that changed such a file
while the Eval did not use it is not listed.

The commits are asked of git as `git log -- PATHS` walks them: first the Eval folders (with
`-n`, the newest N); the files their states there name are then added to the paths, and
the commits that changed only those are kept where an Eval used them at that commit (the
file differs from the commit's first parent)."""

from __future__ import annotations

from pathlib import Path

from smevals.history.commits import Range
from smevals.history.states import States
from smevals.sides.uses import tree_ids


def choose(rng: Range, paths: dict[Path, list[str]], states: States,
           n: int | None) -> list[str]:
    """The commits listed, newest first (at most `n`)."""
    own = sorted({p for ps in paths.values() for p in ps})
    base = rng.listed(own, n)
    # the states in force at the listed commits; with --since, the one the range starts in
    starts = base + ([rng.since] if rng.since else [])
    states.fill(starts)
    used = sorted({p for sha in starts for folder in paths for p in states.uses(sha, folder)})
    if not used:
        return base
    mine = set(rng.listed(own) if n is not None else base)
    candidates = rng.listed(own + used)
    extra = [sha for sha in candidates if sha not in mine]
    kept = changing_uses(rng.repo, extra, list(paths), states)
    chosen = [sha for sha in candidates if sha in mine or sha in kept]
    return chosen[:n] if n is not None else chosen


def changing_uses(repo: Path, shas: list[str], folders: list[Path],
                  states: States) -> set[str]:
    """Those of `shas` that changed, against their first parent, a file outside an Eval
    folder that the Eval uses at that commit."""
    states.fill(shas)
    wanted = [(sha, path) for sha in shas
              for path in sorted({p for f in folders for p in states.uses(sha, f)})]
    ids = tree_ids(repo, [(sha, p) for sha, p in wanted] + [(f"{sha}^1", p) for sha, p in wanted])
    now, before = ids[:len(wanted)], ids[len(wanted):]
    return {sha for (sha, _p), a, b in zip(wanted, now, before, strict=True) if a != b}
