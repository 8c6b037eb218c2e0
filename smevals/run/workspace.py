"""A Task's starting files in a Run: copied in before the runner, settled after it.

Before the runner starts, the starting files (spec/workspace.py) are copied into the Run's
workspace, hashed again as they are copied (a file edited since the plan fails the Run
rather than give it the wrong inputs). After the runner, `settle` keeps only the agent's
work: unchanged starting files are removed (they are the Task's, never stored twice),
changed and new files stay as artifacts, and `workspace.diff` says what changed against the
starting files. The names smevals puts at the top of a Run are never the agent's work.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

from smevals.run.wsdiff import DIFF_NAME, diff_text
from smevals.spec.workspace import RESERVED, StartFile, Starting, digest_of
from smevals.store.records import Truncation, WorkspaceChanges
from smevals.store.regular import open_regular
from smevals.store.workspace import hash_copy, manifest_at, open_dir, remove, write_new


class CopyError(Exception):
    """The starting files could not be copied as planned (the message says which)."""


def copy_in(start: Starting, fd: int) -> None:
    """Copy the starting files into the folder `fd` (the Run's empty workspace), checking
    each file's bytes against the digest the Run's inputs hold."""
    sums = {}
    for item in start.files:
        sums[item.rel] = _copy_one(item, fd)
    if digest_of(sums) != start.digest:
        changed = sorted(rel for rel, digest in sums.items() if start.sha256.get(rel) != digest)
        raise CopyError(f"starting file(s) changed while smevals ran: {', '.join(changed)}")


def _copy_one(item: StartFile, fd: int) -> str:
    *folders, name = item.rel.split("/")
    here = os.dup(fd)
    try:
        for folder in folders:
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, 0o755, dir_fd=here)
            inner = open_dir(folder, here)
            os.close(here)
            here = inner
        try:
            source, _info = open_regular(str(item.source))
        except OSError as exc:
            raise CopyError(f"starting file '{item.rel}' cannot be read: {exc}") from None
        try:
            out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                          0o755 if item.executable else 0o644, dir_fd=here)
            try:
                return hash_copy(source, out)[1]
            finally:
                os.close(out)
        finally:
            os.close(source)
    finally:
        os.close(here)


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


def settle(start: Starting, fd: int) -> Settled:
    """Compare the Run's workspace `fd` with the starting files: remove the unchanged ones,
    write `workspace.diff` (a file of that name the runner left is replaced) and say what
    changed. Never follows a link or opens anything but a regular file."""
    remove(fd, DIFF_NAME)
    final = {e["path"]: e for e in manifest_at(fd) if not _reserved(e["path"])}
    done = Settled(start.digest)
    starting = start.by_rel()
    for rel in sorted(starting):
        entry = final.get(rel)
        if entry is None:
            done.deleted.append(rel)
        elif entry.get("sha256") == start.sha256[rel]:
            _remove_unchanged(fd, rel)
        else:
            done.changed.append(rel)
    done.added = sorted(rel for rel in final if rel not in starting)
    text, written = diff_text(start, fd, done.changed, done.added, done.deleted, final)
    data = text.encode("utf-8")
    if written > len(data):
        done.truncated = {"kept_bytes": len(data), "written_bytes": written}
    if data:
        write_new(fd, DIFF_NAME, data)
    return done


def _reserved(rel: str) -> bool:
    return rel in RESERVED


def _remove_unchanged(fd: int, rel: str) -> None:
    """Unlink a starting file left as it was, then the folders it leaves empty."""
    parts = rel.split("/")
    fds = [os.dup(fd)]
    try:
        for folder in parts[:-1]:
            fds.append(open_dir(folder, fds[-1]))
        os.unlink(parts[-1], dir_fd=fds[-1])
        for depth in range(len(parts) - 1, 0, -1):
            try:
                os.rmdir(parts[depth - 1], dir_fd=fds[depth - 1])
            except OSError:
                break
    finally:
        for handle in fds:
            os.close(handle)
