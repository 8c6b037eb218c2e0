"""What a run of many diffs between neighbouring commits reads once: the History page's
diff of each commit against its parent (`build --history N`, `serve`).

- **Evals, by git object ids.** Extracting an Eval at a commit (`git archive`, then parsing
  every Task) costs more than reading its store. An Eval read at one commit is used again
  at another whose Eval folder holds the same entries (each sub-folder by its tree id, each
  file by its blob id, the default store left out) and whose files outside the folder
  (`uses.outside`: a shared runner, a checker program, a database) have the same ids. The
  extracted folders live in this object's own temporary folder until it is closed.
- **Sides, by commit.** A commit's side of one diff is the parent side of the next: the
  last few are kept, by (Eval folder, commit, reading options).
"""

from __future__ import annotations

import tempfile
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from smevals.evaldef.committed import Revision, repo_path, resolve
from smevals.evaldef.model import Eval
from smevals.sides.read import Opened, Side, SideSpec, open_side, store_at
from smevals.sides.uses import Listing, digest, listings, outside, tree_ids, without
from smevals.store.read import store_root

EVALS = 8                   # Evals kept (the states read last)
SIDES = 4                   # Sides kept (a diff's two, and the next one's)
DEFAULT_STORE = "results"


class Reuse:
    def __init__(self) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="smevals-reuse-")
        self.folder = Path(self._tmp.name)
        self.evals: OrderedDict[tuple[Any, ...], tuple[list[str], list[str], Eval]] = \
            OrderedDict()
        self.sides: OrderedDict[tuple[Any, ...], Side | None] = OrderedDict()
        self.extracted = 0          # Evals extracted (the others were reused)

    def close(self) -> None:
        self.evals.clear()
        self.sides.clear()
        self._tmp.cleanup()

    def __enter__(self) -> Reuse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def side(self, folder: Path, rev: str | None, spec: SideSpec,
             read: Callable[[], Side | None]) -> Side | None:
        """The side `read()` gives, kept by (folder, commit, spec); the working tree's is
        never kept."""
        if rev is None:
            return read()
        key = (folder, resolve(folder, rev).commit, spec)
        if key in self.sides:
            self.sides.move_to_end(key)
            return self.sides[key]
        found = self.sides[key] = read()
        while len(self.sides) > SIDES:
            self.sides.popitem(last=False)
        return found

    def open(self, folder: Path, rev: str | None, store_opt: str | None) -> Opened:
        """As `open_side(folder, rev, store_opt, ...)`, the Eval reused when everything it
        is made of has the same git ids as where it was read."""
        if rev is None:
            return open_side(folder, rev, store_opt, self.folder)
        revision = resolve(folder, rev)
        prefix = repo_path(revision, folder)
        listing = self._listing(revision, prefix, store_opt)
        key = (folder, store_opt, digest(listing)) if listing is not None else None
        if key is not None and key in self.evals:
            paths, ids, ev = self.evals[key]
            if _ids(revision, paths) == ids:
                self.evals.move_to_end(key)
                return Opened(folder, ev, store_at(store_root(folder, ev.name, store_opt),
                                                   revision), revision)
        opened = open_side(folder, rev, store_opt, self.folder)
        self.extracted += 1
        if key is not None:
            paths = outside(opened.ev, prefix, revision.repo)
            self.evals[key] = (paths, _ids(revision, paths), opened.ev)
            while len(self.evals) > EVALS:
                self.evals.popitem(last=False)
        return opened

    @staticmethod
    def _listing(revision: Revision, prefix: str, store_opt: str | None) -> Listing | None:
        if "\n" in prefix:
            return None
        found = listings(revision.repo, [(revision.commit, prefix)])[0]
        return without(found, None if store_opt else DEFAULT_STORE)


def _ids(revision: Revision, paths: list[str]) -> list[str]:
    return tree_ids(revision.repo, [(revision.commit, p) for p in paths])
