"""The Eval at a commit, reused from the previous commit read while its authoring files are
the same: most commits of a history add results and leave the Tasks, configs and graders
alone, and extracting and parsing a large Eval again at each commit would cost more than
reading its store.

"The same" is decided by git object ids: the entries of the Eval folder at the commit (each
sub-folder by its tree id, each file by its blob id), its store folder left out. An Eval
whose runner or checker programs (or replay files), or any file its grader version covers,
lie outside its folder is read afresh at every commit: their ids are not in that
listing."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.grade.version import version_files
from smevals.sides.read import Opened, open_side, programs_of, store_at
from smevals.spec.committed import Revision, repo_path, resolve
from smevals.spec.model import Eval
from smevals.store.base import SourceError
from smevals.store.gitcat import git
from smevals.store.read import store_root

BUILTINS = "smevals built-ins"         # version_files' name for smevals' own checkers


@dataclass
class Authoring:
    """Per Eval folder: the listing its Eval was last read with, and that Eval."""

    known: dict[Path, tuple[bytes, Eval]] = field(default_factory=dict)

    def open(self, folder: Path, sha: str, store: str | None, tmp: Path) -> Opened:
        """As `sides.read.open_side(folder, sha, store, tmp)`, the Eval reused when it can."""
        revision = resolve(folder, sha)
        key = _listing(revision, folder, store)
        if key is not None and not _has_eval(key):
            raise Absent(f"{folder}: no Eval at revision {revision.label()}")
        known = self.known.get(folder)
        if key is not None and known is not None and known[0] == key:
            ev = known[1]
            return Opened(folder, ev, store_at(store_root(folder, ev.name, store), revision),
                          revision)
        opened = open_side(folder, sha, store, tmp)
        if key is not None and self_contained(opened.ev):
            self.known[folder] = (key, opened.ev)
        return opened


class Absent(SmevalsError):
    """The Eval's folder, or its eval.yaml, is not in the commit."""


def _has_eval(listing: bytes) -> bool:
    """Whether the entries hold eval.yaml as a file (not a link: extracting skips one)."""
    for entry in listing.split(b"\0"):
        meta, _tab, path = entry.partition(b"\t")
        if path.rsplit(b"/", 1)[-1] == b"eval.yaml" and meta[:6] in (b"100644", b"100755"):
            return True
    return False


def _listing(revision: Revision, folder: Path, store: str | None) -> bytes | None:
    """The Eval folder's entries at the revision, its default store left out; None when
    it cannot be listed (open_side then says why)."""
    try:
        prefix = repo_path(revision, folder)
        spec = [f":(literal){prefix}/"] if prefix else []
        out = git(revision.repo, "ls-tree", "-z", revision.commit, "--", *spec,
                  what="git ls-tree")
    except (SmevalsError, SourceError):
        return None
    skip = None if store else f"{prefix}/results" if prefix else "results"
    entries = [e for e in out.split(b"\0")
               if e and e.partition(b"\t")[2].decode("utf-8", "surrogateescape") != skip]
    return b"\0".join(entries)


def self_contained(ev: Eval) -> bool:
    """Whether every program path the Eval names, and every file its graders' versions
    cover (modules a checker imports, `depends:` files, templates), lies inside its folder
    (a bare name on PATH is not versioned, so it is the same at every commit)."""
    top = os.path.realpath(ev.path)

    def inside(path: Path) -> bool:
        where = os.path.realpath(path)
        return os.path.commonpath([top, where]) == top

    for base, spec in programs_of(ev):
        spec = spec.strip()
        if "/" not in spec and "\\" not in spec:
            continue
        if os.path.isabs(spec) or not inside(base / spec):
            return False
    return all(name == BUILTINS or ((ev.path / name).is_file() and inside(ev.path / name))
               for grader in ev.graders.values() for name in version_files(grader))
