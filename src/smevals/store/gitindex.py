"""Reading every record of a store at a git revision quickly, reusing what was read before.

Git names every file and folder by the hash of its content, so a record parsed once can be
reused wherever the same blob id comes up again: from the working tree's index (which
keeps each record's blob id, `index.blob_id`) and from the revisions read before (the last
KEEP of them are kept per store and kind in the cache folder, by the tree id of the kind's
folder). A revision whose kind folder has the tree id of one read before is not even
listed. Only blobs found nowhere are read, through `git cat-file --batch`. Matching is by
blob or tree id, never by path, so nothing here can be stale.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals import caches
from smevals.files.gitcat import cat_files
from smevals.files.regular import record_limit
from smevals.store import cache, damage, gitsource, index
from smevals.store.layout import KINDS, RECORD_NAMES

if TYPE_CHECKING:
    from smevals.store.gitsource import Found, GitSource

KEEP = 3                    # revisions kept in the cache per store and kind

_SEEN: dict[tuple[str, str], cache.GitIndex] = {}             # (root, name): this process
_KNOWN: dict[tuple[str, str], dict[str, Any]] = {}            # (root, label): blob -> record
caches.register(__name__, "_SEEN", "_KNOWN")


def read_kind(source: GitSource, root: Path, kind: str,
              brief: bool) -> tuple[list[str], list[Any]]:
    """(rels, records) of every object of `kind` at the source's revision; a record that
    cannot be read or parsed is given as a str saying why."""
    tree = source.kind_trees().get(kind)
    if tree is None:
        return [], []
    label, name = _names(kind, brief, tree)
    seen = (os.path.realpath(root), name)
    found = _SEEN.get(seen) or cache.load_git(root, name)
    if found is None or found.tree != tree:
        for other in KINDS:                    # list the other kind meanwhile, if needed
            if other != kind and _missing(source, root, other, brief):
                source.start_listing(other)
        with index.gc_paused():
            rels, blobs, files = source.record_blobs(kind)
            records, listed = _records(source, root, kind, brief, rels, blobs, files)
        found = cache.GitIndex(tree, rels, blobs, records, listed)
        cache.save(root, name, found)
        cache.prune(root, label, KEEP)
    _SEEN[seen] = found
    return found.rels, found.records


def _missing(source: GitSource, root: Path, kind: str, brief: bool) -> bool:
    """Whether reading `kind` at the source's revision will have to list it."""
    tree = source.kind_trees().get(kind)
    if tree is None:
        return False
    name = _names(kind, brief, tree)[1]
    return (os.path.realpath(root), name) not in _SEEN \
        and not cache.cache_path(root, name).exists()


def _names(kind: str, brief: bool, tree: str) -> tuple[str, str]:
    """The cache label of a kind's git reads, and the name of one revision's read."""
    label = index.label(kind, brief) + "-git"
    return label, f"{label}-{tree[:20]}"


def _records(source: GitSource, root: Path, kind: str, brief: bool, rels: list[str],
             blobs: list[str], files: list[Found]) -> tuple[list[Any], list[damage.Listed]]:
    """Records are reused by blob id and object folder together: a blob checked against
    one folder's id and place says nothing about another. Each object's files are then
    checked against its record (gitsource.files_problem)."""
    known = _known(root, kind, brief)
    keys = [_key(blob, rel) for blob, rel in zip(blobs, rels, strict=True)]
    found: list[Any] = [known.get(key) for key in keys]
    todo = [i for i, blob in enumerate(blobs)
            if blob and blob != gitsource.LINKED and found[i] is None]
    wanted = [(blobs[i], rels[i]) for i in todo]
    for i, parsed in zip(todo, _read(wanted, source.repo, kind, brief), strict=True):
        found[i] = parsed
        if parsed[0].__class__ is dict:
            known[keys[i]] = parsed
    records: list[Any] = []
    listed: list[damage.Listed] = []
    for blob, parsed, have in zip(blobs, found, files, strict=True):
        if blob == gitsource.LINKED:
            records.append(gitsource.LINKED_WHY)
            listed.append(())
            continue
        record, listing = parsed if blob else (index.parse_record(kind, None), ())
        why = gitsource.files_problem(listing, have) if record.__class__ is dict else None
        records.append(record if why is None else why)
        listed.append(listing)
    return records, listed


def _key(blob: str, rel: str) -> str:
    """A blob id with the object folder it was read for."""
    return f"{blob}\0{rel}"


def _read(wanted: list[tuple[str, str]], repo: Path, kind: str,
          brief: bool) -> list[tuple[Any, damage.Listed]]:
    """Parsed (and checked against the object's folder) as they come from one
    `git cat-file`, while git reads the next ones: (record or why, files listed)."""
    memo: dict[str, str] = {}
    contents = cat_files(repo, [blob for blob, _rel in wanted], record_limit())
    try:
        return [index.parse_listed(kind, _named(kind, next(contents)), brief, memo, rel)
                for _blob, rel in wanted]
    finally:
        contents.close()


def _named(kind: str, data: object) -> bytes | str | None:
    """A blob refused for its size, said as the working tree says it (a record is never
    asked for as a digest)."""
    if isinstance(data, str):
        return f"{RECORD_NAMES[kind]} is {data}"
    return data if isinstance(data, bytes) else None


def _known(root: Path, kind: str, brief: bool) -> dict[str, Any]:
    """Parsed records by blob id, gathered once per process: from the working tree's
    cached index (as it is: matching by blob id needs no check that it is current) and
    from the revision read most recently."""
    key = (os.path.realpath(root), index.label(kind, brief))
    if key in _KNOWN:
        return _KNOWN[key]
    known: dict[str, Any] = {}
    here = cache.load(root, key[1])
    newest = cache.newest_git(root, f"{key[1]}-git")
    for part in (here, newest):
        if part is not None:
            known.update((_key(blob, rel), (record, listed)) for blob, rel, record, listed
                         in zip(part.blobs, part.rels, part.records, part.files, strict=True)
                         if blob and record.__class__ is dict)
    _KNOWN[key] = known
    return known
