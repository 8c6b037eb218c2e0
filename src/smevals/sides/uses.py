"""What an Eval uses from outside its folder, and its folder's entries, at any commit.

An Eval's figures at a commit depend on its folder (authoring files and store) and on the
files its configs and graders name by a path that leads out of it: a runner or checker
program (`../../shared/run.sh`), a replay responses file, an SQL Check's database, a
judge's template file. Each of those is part of what `diff` compares (the Runs' inputs
hash, the grader version), so a commit that changes only one of them changes the figures
(or makes them stale) as much as an edit inside the folder does.

Which files those are is decided by the Eval's authoring files alone (the paths written in
its YAML), so it is worked out once per state of the folder: the folder's entries at a
commit, its store left out (`Listing`), read for many commits with one `git cat-file
--batch` (no checkout, no extraction unless the state is new).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.evaldef.model import Eval
from smevals.sides.read import files_of

Entry = tuple[str, str, str]         # (mode, name, object id) of one entry of a folder
Listing = tuple[Entry, ...]
FILE_MODES = ("100644", "100755")


def listings(repo: Path, wanted: list[tuple[str, str]]) -> list[Listing | None]:
    """The entries of the folder `prefix` ("" for the top) at each (commit, prefix), or
    None where the commit has no such folder: one `git cat-file --batch` for them all."""
    if not wanted:
        return []
    names = "".join(f"{sha}:{prefix}\n" if prefix else f"{sha}^{{tree}}\n"
                    for sha, prefix in wanted)
    try:
        proc = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch"],
                              input=names.encode("utf-8", "surrogateescape"),
                              capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SmevalsError(f"git cat-file cannot read the commits: {exc}") from None
    out: list[Listing | None] = []
    data, at = proc.stdout, 0
    for _ in wanted:
        end = data.index(b"\n", at)
        header = data[at:end].split()
        at = end + 1
        if len(header) < 3 or header[1] == b"missing":
            out.append(None)
            continue
        size = int(header[2])
        body = data[at:at + size]
        at += size + 1
        out.append(parse_tree(body, len(header[0]) // 2) if header[1] == b"tree" else None)
    return out


def parse_tree(body: bytes, id_bytes: int) -> Listing:
    """A raw git tree object's entries (`<mode> <name>\\0<id>` each)."""
    entries = []
    at = 0
    while at < len(body):
        space = body.index(b" ", at)
        nul = body.index(b"\0", space)
        oid = body[nul + 1:nul + 1 + id_bytes].hex()
        mode = body[at:space].decode("ascii", "replace")
        entries.append((mode, body[space + 1:nul].decode("utf-8", "surrogateescape"), oid))
        at = nul + 1 + id_bytes
    return tuple(entries)


def without(listing: Listing | None, name: str | None) -> Listing | None:
    """The listing with the entry `name` (the Eval's default store) left out."""
    if listing is None or name is None:
        return listing
    return tuple(e for e in listing if e[1] != name)


def has_eval(listing: Listing | None) -> bool:
    """Whether the folder holds eval.yaml as a file (not a link: extracting skips one)."""
    return listing is not None and any(name == "eval.yaml" and mode in FILE_MODES
                                       for mode, name, _oid in listing)


def digest(listing: Listing) -> str:
    """One hash of a folder's entries: equal entries, equal authoring files."""
    text = "\0".join(f"{mode} {name} {oid}" for mode, name, oid in listing)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def outside(ev: Eval, prefix: str, repo: Path) -> list[str]:
    """The files (as paths from the top of the repository) that the Eval, read from a
    revision's mirror of the repository with its folder at `prefix`, names by a path
    outside its folder: programs, replay responses, grader data files. A path that leaves
    the repository is not in git (every commit uses it as it is); a bare program name is
    looked up on PATH, and counts only when found inside the repository."""
    depth = len(Path(prefix).parts) if prefix else 0
    top = ev.path
    for _ in range(depth):
        top = top.parent
    found = set()
    for base, spec in files_of(ev):
        rel = _in_repository(spec.strip(), base, top, repo)
        if rel is not None and not _below(rel, prefix):
            found.add(rel)
    return sorted(found)


def _in_repository(spec: str, base: Path, top: Path, repo: Path) -> str | None:
    if not spec:
        return None
    if "/" not in spec and "\\" not in spec:
        where = shutil.which(spec)                  # a bare name on PATH
        if where is None:
            return None
        return _relative(os.path.realpath(where), str(repo))
    if os.path.isabs(spec):
        return _relative(os.path.normpath(spec), str(repo))
    return _relative(os.path.normpath(base / spec), str(top))


def _relative(path: str, root: str) -> str | None:
    rel = os.path.relpath(path, root)
    if rel == "." or rel == ".." or rel.startswith(".." + os.sep):
        return None
    return rel.replace(os.sep, "/")


def _below(rel: str, prefix: str) -> bool:
    return not prefix or rel == prefix or rel.startswith(prefix + "/")


def tree_ids(repo: Path, wanted: list[tuple[str, str]]) -> list[str]:
    """The git id of each (commit, path) (the commit's root tree for the path ""), or ""
    where the commit has no such path: one `git cat-file --batch-check` for them all."""
    if not wanted:
        return []
    lines = "".join(f"{sha}:{path}\n" if path else f"{sha}^{{tree}}\n" for sha, path in wanted)
    try:
        proc = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch-check"],
                              input=lines.encode("utf-8", "surrogateescape"),
                              capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise SmevalsError(f"git cat-file cannot read the commits: {exc}") from None
    out = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if len(out) != len(wanted):
        raise SmevalsError("git cat-file gave an answer per path that does not add up")
    return [line.split(" ", 1)[0] if not line.endswith(" missing") else "" for line in out]
