"""A Task's starting files in a Run, after the runner: only the agent's work is kept.

Before the runner starts, the starting files are copied into the Run's workspace
(spec/workspace.py `copy_in`, from run/attempt.py). After the runner, `settle` keeps only
the agent's work: unchanged starting files are removed (they are the Task's, never stored twice),
changed and new files stay as artifacts, and `workspace.diff` says what changed against the
starting files. The names smevals puts at the top of a Run are never the agent's work.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from smevals.run.wsdiff import DIFF_NAME, diff_text
from smevals.spec.workspace import RESERVED, Starting
from smevals.store.records import Truncation, WorkspaceChanges
from smevals.store.workspace import descend, manifest_at, remove, write_new


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
            fds.append(descend(fds[-1], [folder]))
        os.unlink(parts[-1], dir_fd=fds[-1])
        for depth in range(len(parts) - 1, 0, -1):
            try:
                os.rmdir(parts[depth - 1], dir_fd=fds[depth - 1])
            except OSError:
                break
    finally:
        for handle in fds:
            os.close(handle)
