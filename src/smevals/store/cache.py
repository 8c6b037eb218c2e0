"""A disposable index of records, kept outside the repository (in the cache folder of
files/cachefile.py: platformdirs' user cache dir; `SMEVALS_CACHE_DIR` overrides it,
`SMEVALS_NO_CACHE=1` turns it off).

One file per store and kind holds, in marshal form (fast to decode, and unlike pickle it
cannot run code): the object folders, their records' stat stamps and every parsed record.
`index.py` decides what is still valid; this module only reads and writes the file.
Deleting it at any time only costs time.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NamedTuple

from smevals.files.cachefile import (
    cache_dir,
    discard,
    enabled,
    folder_key,
    read_marshal,
    write_marshal,
)

CACHE_VERSION = 10
_HEADER = (b"smevals-index", CACHE_VERSION, sys.version_info[:2])


class Index(NamedTuple):
    rels: list[str]         # object folders, sorted
    stamps: list[Any]       # each record's stat stamp (index.Stamp; None: read it again)
    records: list[Any]      # the record, or a str saying why it cannot be used
    blobs: list[str]        # each record's git blob id ("" when it could not be read)
    dirs: dict[str, Any]    # folder names as listed, by folder (index.Dirs)
    files: list[Any]        # the files each record lists (damage.Listed)


def cache_path(root: Path, kind: str = "run") -> Path:
    return cache_dir() / f"index-{folder_key(root)}-{kind}.marshal"


def load(root: Path, kind: str) -> Index | None:
    """The cached index of `kind` for `root`, or None when absent, old or unreadable."""
    data = _read(root, kind, 6)
    if data is None or not _same_length(data[:4] + data[5:]) or not _folders(data[4]):
        return None
    return Index(*data)


class GitIndex(NamedTuple):
    """The records of one kind as last read at a git revision."""

    tree: str               # the git tree id of the kind's folder there
    rels: list[str]
    blobs: list[str]        # each record's blob id ("" when the object has no record)
    records: list[Any]
    files: list[Any]        # the files each record lists (damage.Listed)


def load_git(root: Path, label: str) -> GitIndex | None:
    """A git read of `label` for `root` (see gitindex.py), or None."""
    data = _read(root, label, 5)
    if data is None or not (isinstance(data[0], str) and _same_length(data[1:])):
        return None
    return GitIndex(*data)


def _read(root: Path, label: str, fields: int) -> tuple[Any, ...] | None:
    """The `fields` saved after the header, or None when the file is absent, unreadable,
    of another version or another store."""
    if not enabled():
        return None
    data = read_marshal(str(cache_path(root, label)))
    if not (isinstance(data, tuple) and len(data) == 3 + fields and data[0] == _HEADER
            and data[1] == os.path.realpath(root) and data[2] == label):
        return None
    return data[3:]


def _folders(dirs: object) -> bool:
    return isinstance(dirs, dict) and all(
        isinstance(v, tuple) and len(v) == 2 and isinstance(v[1], list) for v in dirs.values())


def _same_length(parts: tuple[Any, ...]) -> bool:
    return all(isinstance(part, list) and len(part) == len(parts[0]) for part in parts)


def _git_files(root: Path, label: str) -> list[Path]:
    """The cached git reads of `label` for `root`, most recently written first."""
    stem = cache_path(root, f"{label}-").name[:-len(".marshal")]
    try:
        found = [(entry.stat().st_mtime_ns, Path(entry.path)) for entry in os.scandir(cache_dir())
                 if entry.name.startswith(stem) and entry.name.endswith(".marshal")]
    except OSError:
        return []
    return [path for _mtime, path in sorted(found, reverse=True)]


def newest_git(root: Path, label: str) -> GitIndex | None:
    """The most recently written git read of `label` (any revision), or None."""
    for path in _git_files(root, label)[:1]:
        name = path.name[path.name.index(label):-len(".marshal")]
        return load_git(root, name)
    return None


def prune(root: Path, label: str, keep: int) -> None:
    """Delete all but the `keep` most recently written git reads of `label`."""
    for path in _git_files(root, label)[keep:]:
        discard(str(path))


def save(root: Path, kind: str, index: Index | GitIndex) -> None:
    """Write the index atomically; a failure to write is ignored (it is only a cache)."""
    if enabled():
        write_marshal(str(cache_path(root, kind)),
                      (_HEADER, os.path.realpath(root), kind, *index))


