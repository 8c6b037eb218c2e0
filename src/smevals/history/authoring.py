"""The Eval at a commit, reused from a commit read before whenever everything it is made of
is the same: most commits of a history add results and leave the Tasks, configs, graders
and shared programs alone, and extracting and parsing a large Eval again at each commit
would cost more than reading its store.

"The same" is decided by git object ids, as the caller gives them in `key`: the entries of
the Eval folder at the commit (each sub-folder by its tree id, each file by its blob id),
its store folder left out, and the id of every file it names outside its folder (a shared
runner or checker program, a database: `uses.outside`). Without a key the Eval is read
afresh."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.evaldef.committed import resolve
from smevals.evaldef.model import Eval
from smevals.sides.read import Opened, open_side, store_at
from smevals.store.read import store_root

Key = tuple[str, tuple[str, ...]]    # (digest of the folder's entries, ids of outside files)
KEPT = 8                             # Evals kept per folder (the states read last)


@dataclass
class Authoring:
    """Per Eval folder: the Evals read, by the key they were read with."""

    known: dict[Path, OrderedDict[Key, Eval]] = field(default_factory=dict)

    def open(self, folder: Path, sha: str, store: str | None, tmp: Path,
             key: Key | None = None) -> Opened:
        """As `sides.read.open_side(folder, sha, store, tmp)`, the Eval reused when one was
        read with the same `key`."""
        known = self.known.setdefault(folder, OrderedDict())
        ev = known.get(key) if key is not None else None
        if ev is not None:
            known.move_to_end(key)          # type: ignore[arg-type]
            revision = resolve(folder, sha)
            return Opened(folder, ev, store_at(store_root(folder, ev.name, store), revision),
                          revision)
        opened = open_side(folder, sha, store, tmp)
        if key is not None:
            self.remember(folder, key, opened.ev)
        return opened

    def remember(self, folder: Path, key: Key, ev: Eval) -> None:
        known = self.known.setdefault(folder, OrderedDict())
        known[key] = ev
        while len(known) > KEPT:
            known.popitem(last=False)


class Absent(SmevalsError):
    """The Eval's folder, or its eval.yaml, is not in the commit."""
