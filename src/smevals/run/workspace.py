"""A Task's starting files in a Run, after the runner: only the agent's work is kept.

Before the runner starts, the starting files are copied into the Run's workspace
(evaldef/workspace.py `copy_in`, from run/attempt.py). After the runner, `settle` keeps only
the agent's work: unchanged starting files are removed (they are the Task's, never stored twice),
changed and new files stay as artifacts, and `workspace.diff` says what changed against the
starting files. The names smevals puts at the top of a Run are never the agent's work.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field

from smevals.evaldef.workspace import RESERVED, Stamps, Starting, stamp_of
from smevals.files.regular import NotRegular, open_regular
from smevals.files.workspace import Folders, hash_copy, open_dir, remove, write_new
from smevals.run.wsdiff import DIFF_NAME, diff_text
from smevals.store.records import FileEntry, Truncation, WorkspaceChanges


@dataclass
class Settled:
    """What the agent did to the starting files, for the Run record."""

    digest: str
    changed: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    truncated: Truncation | None = None

    def record(self) -> WorkspaceChanges:
        return {"hash": self.digest, "changed": self.changed, "added": self.added,
                "deleted": self.deleted}


def settle(start: Starting, fd: int, stamps: Stamps | None = None,
           ignore: tuple[str, ...] = ()) -> Settled:
    """Compare the Run's workspace `fd` with the starting files: remove the unchanged ones,
    write `workspace.diff` (a file of that name the runner left is replaced) and say what
    changed. Never follows a link or opens anything but a regular file. A starting file
    whose inode, size, mtime and ctime are still those `copy_in` left (`stamps`) is
    unchanged without being read: no write or chmod leaves the ctime as it was, except one
    in the same clock tick as the copy, so a file copied in the copy's last tick is read
    (git's "racily clean" rule)."""
    remove(fd, DIFF_NAME)
    final: dict[str, FileEntry] = {}
    last = max((s[3] for s in (stamps or {}).values()), default=0)
    trusted = {rel: s for rel, s in (stamps or {}).items() if s[3] < last}
    _walk(fd, "", trusted, start.sha256, final)
    done = Settled(start.digest)
    starting = start.by_rel()
    if ignore:                      # noise removed before (run/ignore.py): not a deletion
        from smevals.run.ignore import matcher

        skipped = matcher(ignore)
        starting = {rel: s for rel, s in starting.items() if not _ignored(rel, skipped)}
    unchanged = []
    for rel in sorted(starting):
        entry = final.get(rel)
        if entry is None:
            done.deleted.append(rel)
        elif entry.get("sha256") == start.sha256[rel]:
            unchanged.append(rel)
        else:
            done.changed.append(rel)
    _remove_unchanged(fd, unchanged)
    done.added = sorted(rel for rel in final if rel not in starting)
    text, written = diff_text(start, fd, done.changed, done.added, done.deleted, final)
    data = text.encode("utf-8")
    if written > len(data):
        done.truncated = {"kept_bytes": len(data), "written_bytes": written}
    if data:
        write_new(fd, DIFF_NAME, data)
    return done


def _ignored(rel: str, skipped: Callable[[str, bool], bool]) -> bool:
    """Whether the path, or a folder it lies in, is left out by the rules."""
    parts = rel.split("/")
    return any(skipped("/".join(parts[:i + 1]), i < len(parts) - 1) for i in range(len(parts)))


def _walk(fd: int, prefix: str, stamps: Stamps, sums: dict[str, str],
          out: dict[str, FileEntry]) -> None:
    """Every file below the folder `fd` but smevals' own names at the top, as a manifest
    entry; a regular file is hashed unless its stamp says it is a starting file untouched."""
    with os.scandir(fd) as it:
        names = sorted(entry.name for entry in it)
    for name in names:
        rel = prefix + name
        if not prefix and name in RESERVED:
            continue
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            inner = open_dir(name, fd)
            try:
                _walk(inner, rel + "/", stamps, sums, out)
            finally:
                os.close(inner)
        elif stat.S_ISLNK(info.st_mode):
            out[rel] = {"path": rel, "symlink": os.readlink(name, dir_fd=fd)}
        elif not stat.S_ISREG(info.st_mode):
            out[rel] = {"path": rel, "special": True}
        elif stamps.get(rel) == stamp_of(info):
            out[rel] = {"path": rel, "size": info.st_size, "sha256": sums[rel]}
        else:
            out[rel] = _hashed(fd, name, rel)


def _hashed(fd: int, name: str, rel: str) -> FileEntry:
    try:
        handle, _info = open_regular(name, fd)
    except NotRegular:                      # swapped since the stat: as it is now
        return {"path": rel, "special": True}
    try:
        size, digest = hash_copy(handle, None)
    finally:
        os.close(handle)
    return {"path": rel, "size": size, "sha256": digest}


def _remove_unchanged(fd: int, rels: list[str]) -> None:
    """Unlink the starting files left as they were, then the folders they leave empty."""
    folders = Folders(fd)
    emptied: set[str] = set()
    try:
        for rel in rels:
            here, name = folders.at(rel)
            os.unlink(name, dir_fd=here)
            parent = rel.rpartition("/")[0]
            while parent:
                emptied.add(parent)
                parent = parent.rpartition("/")[0]
        for folder in sorted(emptied, key=lambda f: -f.count("/")):
            here, name = folders.at(folder)
            with contextlib.suppress(OSError):      # not empty: the agent's files are there
                os.rmdir(name, dir_fd=here)
    finally:
        folders.close()
