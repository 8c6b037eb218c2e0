"""A Run's final tree for the Checks of one Grade (`SMEVALS_RUN_WORKSPACE`, `command`).

A Run keeps only what its agent changed (run/workspace.py). The tree the agent left is
rebuilt in a private temporary folder: the Task's starting files as the Eval has them now,
minus the files the Run deleted, with the Run's own files on top (the names smevals keeps
at the top of a Run left out; a symlink or special file the agent left is never recreated).
It is built once per Grade, at the first Check that asks, and removed with the Grade. A Run
of a Task without starting files has a final tree too: its own files.

The starting files must be those the Run started from: when their digest differs from the
one the Run recorded (the Task's files were edited since, as at another revision), the tree
is refused, naming both digests, and the Check that asked fails; nothing is ever graded
against other files.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals.evaldef.model import Eval

if TYPE_CHECKING:
    from smevals.evaldef.workspace import Starting


class TreeError(ValueError):
    """The final tree cannot be rebuilt (the message says why)."""


class FinalTree:
    """The final tree of one Run, built on the first call to `path()`."""

    def __init__(self, ev: Eval, run: dict[str, Any], run_dir: Path):
        self.ev = ev
        self.run = run
        self.run_dir = run_dir
        self._path: Path | None = None
        self._error: str | None = None

    def path(self) -> Path:
        """The folder (built once); TreeError when it cannot be."""
        if self._error is not None:
            raise TreeError(self._error)
        if self._path is None:
            try:
                self._path = self._build()
            except TreeError as exc:
                self._error = str(exc)
                raise
        return self._path

    def agent_files(self) -> dict[str, str]:
        """The Run's own files in the tree, by path: "changed" for a starting file it
        changed, else "added" (smevals' names at the top left out). A Run of a Task without
        starting files added every file it has."""
        return agent_files_at(self.run, self.run_dir)

    def close(self) -> None:
        if self._path is not None:
            shutil.rmtree(self._path.parent, ignore_errors=True)
            self._path = None

    def _build(self) -> Path:
        from smevals.evaldef.workspace import CopyError, copy_in
        from smevals.files.workspace import open_dir

        changes = self.run.get("workspace")
        folder = Path(tempfile.mkdtemp(prefix="smevals-tree-")) / "workspace"
        folder.mkdir()
        try:
            start = self._starting(changes) if changes else None
            fd = open_dir(folder)
            try:
                if start is not None:
                    copy_in(start, fd)
                    for rel in (changes or {}).get("deleted") or []:
                        _remove(fd, str(rel))
                _overlay(self.run_dir, fd, self.run.get("files"))
            finally:
                os.close(fd)
        except (CopyError, OSError) as exc:
            shutil.rmtree(folder.parent, ignore_errors=True)
            raise TreeError(f"the Run's final tree cannot be rebuilt: {exc}") from None
        except BaseException:
            shutil.rmtree(folder.parent, ignore_errors=True)
            raise
        return folder

    def _starting(self, changes: dict[str, Any]) -> Starting:
        """The Task's starting files, as long as they are those the Run started from."""
        from smevals.evaldef.workspace import WorkspaceError, starting

        name = str((self.run.get("task") or {}).get("name"))
        task = self.ev.task(name)
        try:
            start = starting(task) if task is not None else None
        except WorkspaceError as exc:
            raise TreeError(f"the Task's starting files cannot be read: {exc}") from None
        if start is None:
            raise TreeError(f"the Task '{name}' has no `workspace:` in the Eval now, so the "
                            "Run's final tree cannot be rebuilt")
        if start.digest != changes.get("hash"):
            raise TreeError(
                f"the Task's starting files changed since this Run was made (workspace hash "
                f"{str(changes.get('hash'))[:12]} in the Run, {start.digest[:12]} in the Eval); "
                "the Check is not run against other files: run the Task again")
        return start


def agent_files_at(run: dict[str, Any], run_dir: Path) -> dict[str, str]:
    """`agent_files` of a Run whose record may lack its manifest (a fixture's Run): its
    folder `run_dir` then says."""
    files = run.get("files")
    if not isinstance(files, list):
        from smevals.files.workspace import manifest_at, open_dir

        fd = open_dir(run_dir)
        try:
            files = manifest_at(fd)
        finally:
            os.close(fd)
    return agent_files({**run, "files": files})


def agent_files(run: dict[str, Any]) -> dict[str, str]:
    """The files a Run added or changed, by path ("added" or "changed"), from its record."""
    from smevals.evaldef.workspace import RESERVED

    changes = run.get("workspace")
    changed = set(changes.get("changed") or []) if isinstance(changes, dict) else set()
    files = run.get("files")
    out: dict[str, str] = {}
    for entry in files if isinstance(files, list) else []:
        rel = entry.get("path") if isinstance(entry, dict) else None
        if isinstance(rel, str) and rel not in RESERVED:
            out[rel] = "changed" if rel in changed else "added"
    return out


def _remove(fd: int, rel: str) -> None:
    """Remove `rel` below the folder `fd` (never following a link on the way)."""
    from smevals.files.workspace import descend, remove

    *folders, name = rel.split("/")
    try:
        here = descend(fd, folders)
    except (FileNotFoundError, NotADirectoryError):
        return
    try:
        remove(here, name)
    finally:
        os.close(here)


def _overlay(run_dir: Path, fd: int, files: object) -> None:
    """Copy each regular file of the Run (the reserved names at its top left out) over the
    tree `fd`; what the Run holds as a symlink or special file removes the starting file.
    `files` is the Run's manifest (its record's, checked against the copy), else None."""
    from smevals.evaldef.workspace import RESERVED
    from smevals.files.workspace import Folders, manifest_at, open_dir, remove

    source = open_dir(run_dir)
    into, out_of = Folders(fd, make=True), Folders(source)
    try:
        entries = files if isinstance(files, list) else manifest_at(source)
        for entry in entries:
            rel = str(entry["path"])
            if rel in RESERVED:
                continue
            _clear_way(fd, rel)
            here, name = into.at(rel)
            remove(here, name)
            if "sha256" in entry:
                _copy(*out_of.at(rel), here, name)
    finally:
        into.close()
        out_of.close()
        os.close(source)


def _clear_way(fd: int, rel: str) -> None:
    """Remove a starting file that stands where the Run has a folder (the tree holds no
    links: each name below is a folder, a file or nothing)."""
    parts = rel.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        path = "/".join(parts[:depth])
        try:
            info = os.stat(path, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return
        if not stat.S_ISDIR(info.st_mode):
            _remove(fd, path)
            return


def _copy(source: int, name_in: str, here: int, name: str) -> None:
    from smevals.files.regular import open_regular
    from smevals.files.workspace import hash_copy

    src, info = open_regular(name_in, source)
    try:
        mode = 0o755 if info.st_mode & stat.S_IXUSR else 0o644
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode,
                      dir_fd=here)
        try:
            hash_copy(src, out)
        finally:
            os.close(out)
    finally:
        os.close(src)
