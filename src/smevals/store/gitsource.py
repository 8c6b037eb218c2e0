"""The store as committed at a git revision, read without a checkout: `git ls-tree` for the
names, `git cat-file --batch` for the bytes (gitcat.py)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from smevals import caches
from smevals.files.gitcat import (
    Digest,
    Started,
    cat_files,
    cat_many,
    commit_id,
    git_by_id,
    ls_tree_result,
    ls_tree_start,
    ls_trees,
    repo_and_prefix,
)
from smevals.store import gitindex
from smevals.store.base import Entry, Scanned
from smevals.store.layout import DEPTH, KINDS, RECORD_NAMES

_LINK_MODE = "120000"
LINKED = "link"            # the "record blob" of a symlink where an object folder belongs
LINKED_WHY = ("a symlink where a folder of the store belongs: never followed (an object is "
              "a real folder)")
SCAN_CHUNK = 4000           # objects whose blobs verify fetches at a time


class _Tree:
    """Object folder -> [(path inside, mode, blob id)], and files outside any object."""

    def __init__(self) -> None:
        self.objects: dict[str, dict[str, list[tuple[str, str, str]]]] = {"run": {}, "grade": {}}
        self.strays: dict[str, list[str]] = {"run": [], "grade": []}


class GitSource:
    """The store as committed at `rev` (any revision git understands)."""

    def __init__(self, root: Path, rev: str):
        self.root = root.absolute()
        self.rev = rev
        self.label = f"{rev}:{root}"
        self.repo, self.prefix = repo_and_prefix(self.root, root)
        self.commit = commit_id(self.repo, rev, what=f"unknown revision '{rev}'")
        self._tree: _Tree | None = None
        self._kind_trees: dict[str, str] | None = None
        self._listings: dict[str, Started] = {}

    writable = False

    def records(self, kind: str, brief: bool) -> tuple[Sequence[str], Sequence[Any]]:
        return gitindex.read_kind(self, self.root, kind, brief)

    def fresh(self, kind: str, parent: str, known: AbstractSet[str]) -> list[tuple[str, Any]]:
        raise ValueError("cannot read a store at a git revision afresh")

    def afresh(self) -> GitSource:
        return self                     # a revision never changes

    def empty(self) -> bool:
        return not self.kind_trees()

    def tree(self) -> _Tree:
        if self._tree is None:
            top = f"{self.prefix}/" if self.prefix else ""
            out = ls_trees(self.repo, self.commit, [f"{top}{kind}s" for kind in KINDS])
            self._tree = _parse_tree(out, self.prefix)
        return self._tree

    def kind_trees(self) -> dict[str, str]:
        """The git tree id of each kind's folder (`runs/`, `grades/`) at the revision; a
        kind without a folder there is left out."""
        if self._kind_trees is None:
            spec = [f":(literal){self.prefix}/"] if self.prefix else []
            out = git_by_id(self.repo, "ls-tree", "-z", "--full-tree", self.commit, "--", *spec,
                            what="cannot list the store")
            names = {f"{kind}s": kind for kind in KINDS}
            found = {}
            for item in out.decode("utf-8", "surrogateescape").split("\0"):
                meta, _tab, path = item.partition("\t")
                kind = names.get(path.rsplit("/", 1)[-1])
                if kind and meta[7:11] == "tree":
                    found[kind] = meta[12:]
            self._kind_trees = found
        return self._kind_trees

    def start_listing(self, kind: str) -> None:
        """Start `git ls-tree -r` of the kind's folder now, for `record_blobs` to collect
        (not when a revision listed before lets it list only what changed)."""
        tree = self.kind_trees().get(kind)
        if tree is not None and kind not in self._listings \
                and (str(self.repo), self.prefix, kind) not in _FOLDERS:
            self._listings[kind] = ls_tree_start(self.repo, "-l", tree)

    def record_blobs(self, kind: str) -> tuple[list[str], list[str], list[Found]]:
        """Every object folder of `kind` (sorted), the blob id of its record ("" when it
        has none) and its other files, from `git ls-tree -r -l` of the kind's folder: of
        all of it the first time, then (in this process) of only the sub-folders whose
        tree id is not the one listed at the revision read before."""
        tree = self.kind_trees().get(kind)
        started = self._listings.pop(kind, None)
        if tree is None:
            return [], [], []
        key = (str(self.repo), self.prefix, kind)
        known = _FOLDERS.get(key, {})
        tops = _sub_folders(self.repo, tree, LEVELS[kind])
        todo = [top for top in tops if top not in known]
        if started is None and known and len(todo) <= MAX_PATHS:
            specs = [f":(literal){name}" for name, _id in todo]
            out = ls_tree_result(ls_tree_start(self.repo, "-l", tree, "--", *specs)) \
                if todo else b""
        else:
            out = ls_tree_result(started or ls_tree_start(self.repo, "-l", tree))
        fresh = _by_folder(out, kind)
        parts = {top: known[top] if top in known else fresh.get(top[0], ([], [], []))
                 for top in tops}
        _FOLDERS[key] = parts
        return _merged(list(parts.values()))

    def objects(self, kind: str) -> list[str]:
        return sorted(self.tree().objects[kind])

    def judge_entries(self) -> list[tuple[str, bool, bytes | str | None]]:
        """Every file under the judge cache folder (`judges/`) at the revision: (path from
        the store's root, whether it is a regular file, its bytes). A file above the record
        limit comes as a str saying its size (never read), a link or submodule as None."""
        from smevals.files.regular import record_limit

        top = f"{self.prefix}/judges" if self.prefix else "judges"
        out = ls_trees(self.repo, self.commit, [top])
        cut = len(self.prefix) + 1 if self.prefix else 0
        found: list[tuple[str, bool]] = []
        blobs: list[str] = []
        for item in out.decode("utf-8", "surrogateescape").split("\0"):
            meta, tab, path = item.partition("\t")
            if not tab:
                continue
            regular = meta[7:11] == "blob" and meta[:6] in ("100644", "100755")
            found.append((path[cut:], regular))
            if regular:
                blobs.append(meta[12:].split(" ")[0])
        stream = cat_files(self.repo, blobs, record_limit())
        try:
            contents = iter([next(stream) for _ in blobs])
        finally:
            stream.close()
        return [(rel, regular, _as_bytes(next(contents)) if regular else None)
                for rel, regular in found]

    def strays(self, kind: str) -> list[str]:
        return sorted(self.tree().strays[kind])

    def read(self, rel: str) -> bytes:
        blob = self._blob(rel)
        if blob is None:
            raise FileNotFoundError(f"{rel} is not in {self.rev}")
        data = cat_many(self.repo, [blob])[0]
        if not isinstance(data, bytes):             # never a Digest: none was asked for
            raise FileNotFoundError(f"{rel}: git object {blob} is missing")
        return data

    def _blob(self, rel: str) -> str | None:
        for kind in KINDS:
            if rel.startswith(f"{kind}s/"):
                parts = rel.split("/")
                cut = DEPTH[kind] + 2
                files = self.tree().objects[kind].get("/".join(parts[:cut]), [])
                return _blob_of(files, "/".join(parts[cut:]))
        return None

    def listing(self, rel: str) -> list[Entry]:
        kind = "grade" if rel.startswith("grades/") else "run"
        files = [f for f in self.tree().objects[kind].get(rel, [])
                 if f[0] != RECORD_NAMES[kind]]
        contents = cat_many(self.repo, [blob for _p, _m, blob in files])
        return sorted(_git_entry(path, mode, data, hashed=False)
                      for (path, mode, _b), data in zip(files, contents, strict=True))

    def scan(self, kind: str) -> Iterator[Scanned]:
        objects = self.tree().objects[kind]
        rels = sorted(objects)
        for start in range(0, len(rels), SCAN_CHUNK):
            yield from self._scan_chunk(kind, rels[start:start + SCAN_CHUNK], objects)

    def _scan_chunk(self, kind: str, rels: list[str],
                    objects: dict[str, list[tuple[str, str, str]]]) -> Iterator[Scanned]:
        name = RECORD_NAMES[kind]
        listed = [(path, mode, blob) for rel in rels for path, mode, blob in objects[rel]]
        contents = iter(cat_many(self.repo, [blob for _p, _m, blob in listed],
                                 hashed=[path != name and mode != _LINK_MODE
                                         for path, mode, _b in listed]))
        for rel in rels:
            record: bytes | None = None
            files = []
            for path, mode, _blob in objects[rel]:
                data = next(contents)
                if path == name:
                    record = data if isinstance(data, bytes) else None
                else:
                    files.append(_git_entry(path, mode, data, hashed=True))
            yield Scanned(rel, record, sorted(files))


Found = dict[str, tuple[bool, int]]     # path inside an object: (is a symlink, size)


Listed = tuple[list[str], list[str], list[Found]]     # rels, record blob ids, other files
MAX_PATHS = 200             # sub-folders listed by name at most; beyond, the whole folder
# (repository, store folder in it, kind) -> {(sub-folder name, tree id): its objects}, as
# last listed (a sub-folder's objects follow from its name and tree id alone)
_FOLDERS: dict[tuple[str, str, str], dict[tuple[str, str], Listed]] = {}
caches.register(__name__, "_FOLDERS")


LEVELS = {"run": 1, "grade": 2}     # runs/<task>, grades/<grader>/<task>: what changes


def _sub_folders(repo: Path, tree: str, levels: int) -> list[tuple[str, str]]:
    """(path, tree id) of each folder `levels` deep inside the kind's folder `tree`."""
    out = git_by_id(repo, "ls-tree", "-z", tree, what="cannot list the store")
    found = []
    for item in out.decode("utf-8", "surrogateescape").split("\0"):
        meta, _tab, name = item.partition("\t")
        if meta[7:11] != "tree":
            continue
        if levels == 1:
            found.append((name, meta[12:]))
        else:
            found += [(f"{name}/{sub}", oid) for sub, oid in _sub_folders(repo, meta[12:],
                                                                          levels - 1)]
    return found


def _by_folder(out: bytes, kind: str) -> dict[str, Listed]:
    """A listing of `git ls-tree -r -l -z` of a kind's folder, parsed per sub-folder (at
    the depth of LEVELS)."""
    levels = LEVELS[kind]
    groups: dict[str, list[str]] = {}
    for item in out.decode("utf-8", "surrogateescape").split("\0"):
        tab = item.find("\t")
        if tab >= 0:
            parts = item[tab + 1:].split("/", levels)
            groups.setdefault("/".join(parts[:levels]), []).append(item)
    return {name: _parse_listing(items, kind) for name, items in groups.items()}


def _merged(parts: list[Listed]) -> Listed:
    rels: list[str] = []
    blobs: list[str] = []
    files: list[Found] = []
    for part_rels, part_blobs, part_files in parts:
        rels += part_rels
        blobs += part_blobs
        files += part_files
    order = sorted(range(len(rels)), key=rels.__getitem__)
    return [rels[i] for i in order], [blobs[i] for i in order], [files[i] for i in order]


def _parse_listing(items: list[str], kind: str) -> Listed:
    """Object folders, record blob ids and other files from the entries of `git ls-tree -r
    -l -z` of a kind's folder: "<mode> blob <id> <size>\t<path inside the folder>"."""
    record = RECORD_NAMES[kind]
    depth = DEPTH[kind] + 1                         # names and the object id
    objects: dict[str, str] = {}
    files: dict[str, Found] = {}
    for item in items:
        tab = item.find("\t")
        if tab < 0 or item[7:11] != "blob":
            continue
        path = item[tab + 1:]
        parts = path.split("/", depth)
        if len(parts) == depth and item[:6] == _LINK_MODE and "/." not in "/" + path:
            objects[path] = LINKED                  # a symlink where an object belongs
            continue
        if len(parts) <= depth:
            continue                                # a stray file above the objects
        rel = path[:len(path) - len(parts[-1]) - 1]
        blob, _, size = item[12:tab].partition(" ")
        if parts[-1] == record:
            objects[rel] = blob
        else:
            objects.setdefault(rel, "")
            files.setdefault(rel, {})[parts[-1]] = (item[:6] == _LINK_MODE, int(size))
    rels = sorted(rel for rel in objects if "/." not in "/" + rel)
    return ([f"{kind}s/{rel}" for rel in rels], [objects[rel] for rel in rels],
            [files.get(rel, {}) for rel in rels])


def files_problem(listed: tuple[Any, ...], found: Found) -> str | None:
    """Why the files of an object at a revision are not those its record lists (by type and
    size, from the listing), or None: git keeps no special file, so one listed is missing."""
    names = set()
    for i in range(0, len(listed), 2):
        path, size = listed[i], listed[i + 1]
        names.add(path)
        have = found.get(path)
        if have is None:
            return f"{path}: missing: listed in the record but not in the folder"
        is_link, length = have
        if size == -1 and not is_link:
            return f"{path}: the record lists a symlink, not what is found"
        if size >= 0 and is_link:
            return f"{path}: a symlink where the record lists a regular file"
        if size >= 0 and length != size:
            return f"{path}: size changed: {size} bytes recorded, {length} found"
    extra = sorted(set(found) - names)
    return f"{extra[0]}: extra file: in the folder but not listed in the record" if extra \
        else None


def _as_bytes(data: bytes | Digest | str | None) -> bytes | str | None:
    return None if isinstance(data, Digest) else data


def _blob_of(files: list[tuple[str, str, str]], path: str) -> str | None:
    for name, _mode, blob in files:
        if name == path:
            return blob
    return None


def _git_entry(path: str, mode: str, data: bytes | Digest | None, hashed: bool) -> Entry:
    if data is None:
        return Entry(path, -1, "", None)
    if isinstance(data, Digest):                # hashed as it streamed (gitcat)
        return Entry(path, data.size, data.sha256, None)
    if mode == _LINK_MODE:
        return Entry(path, 0, None, os.fsdecode(data))
    return Entry(path, len(data), hashlib.sha256(data).hexdigest() if hashed else None, None)


def _parse_tree(out: bytes, prefix: str) -> _Tree:
    """Entries of `git ls-tree -r -z` ("<mode> <type> <id>\t<path>") of runs/ and grades/.

    Hundreds of thousands of them: kept to a few string operations each."""
    tree = _Tree()
    cut = len(prefix) + 1 if prefix else 0
    depths = {"run": DEPTH["run"] + 2, "grade": DEPTH["grade"] + 2}   # kind, names, id
    for item in out.decode("utf-8", "surrogateescape").split("\0"):
        tab = item.find("\t")
        if tab < 0 or item[7:11] != "blob":
            continue
        path = item[tab + 1 + cut:]
        kind = "run" if path.startswith("runs/") else "grade"
        parts = path.split("/", depths[kind])
        inner = parts[-1]
        rel = path[:len(path) - len(inner) - 1]
        if len(parts) <= depths[kind] or "/." in rel:
            tree.strays[kind].append(path)
        else:
            tree.objects[kind].setdefault(rel, []).append((inner, item[:6], item[12:tab]))
    return tree
