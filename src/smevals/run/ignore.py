"""Generated noise left out of a Run: what a runner or an agent's tools leave behind that is
nobody's work (`__pycache__/`, `*.pyc`, `.pytest_cache/`, `node_modules/`).

After the runner, before the Run is sealed, every file or folder of the Run's folder that
a rule matches is removed, so it is neither kept as an artifact (nor hashed into the
record: only kept files are) nor listed in `workspace.diff`; the record says how many
files and bytes went, under which rules (`ignored`). A Task's or a Config's
`workspace_ignore:` replaces the default rules (the Task's first): `[]` keeps everything,
hashed as every kept file is.

A rule is matched as a `.gitignore` line is, in its simple forms: `name/` is a folder of
that name at any depth, a rule without `/` is a name (a glob: `*.pyc`) at any depth, and a
rule with `/` inside is a path from the top of the Run's folder (`build/*.o`). smevals' own
files at the top (`output.txt`, `workspace.diff`, ...) are never matched. Nothing is
followed: a link is removed as a link, never what it points to.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Callable, Mapping
from typing import Any

from smevals.evaldef.workspace import RESERVED
from smevals.files.workspace import open_dir, remove
from smevals.store.records import Ignored

KEY = "workspace_ignore"
DEFAULT = ("__pycache__/", "*.pyc", ".pytest_cache/", "node_modules/")

Matcher = Callable[[str, bool], bool]      # (path from the top, is a folder) -> ignored


def rules_of(task: Mapping[str, Any], config: Mapping[str, Any]) -> tuple[str, ...]:
    """The Task's `workspace_ignore:`, else the Config's, else the default rules."""
    for doc in (task, config):
        value = doc.get(KEY)
        if isinstance(value, list):
            return tuple(str(rule) for rule in value)
    return DEFAULT


def matcher(rules: tuple[str, ...]) -> Matcher:
    names = [(r.rstrip("/"), r.endswith("/")) for r in rules if "/" not in r.rstrip("/")]
    paths = [(r.strip("/"), r.endswith("/")) for r in rules if "/" in r.rstrip("/")]

    def ignored(rel: str, folder: bool) -> bool:
        if "/" not in rel and rel in RESERVED:
            return False
        name = rel.rsplit("/", 1)[-1]
        return any(fnmatch.fnmatchcase(name, rule) and (folder or not dirs_only)
                   for rule, dirs_only in names) or \
            any(fnmatch.fnmatchcase(rel, rule) and (folder or not dirs_only)
                for rule, dirs_only in paths)

    return ignored


def prune(fd: int, rules: tuple[str, ...]) -> Ignored | None:
    """Remove what `rules` match below the folder `fd`; what went (None: nothing)."""
    if not rules:
        return None
    gone = [0, 0]                   # files, bytes
    _prune(fd, "", matcher(rules), gone)
    if not gone[0]:
        return None
    return {"rules": list(rules), "files": gone[0], "bytes": gone[1]}


def _prune(fd: int, prefix: str, ignored: Matcher, gone: list[int]) -> None:
    with os.scandir(fd) as it:
        names = sorted(entry.name for entry in it)
    for name in names:
        rel = prefix + name
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        folder = stat.S_ISDIR(info.st_mode)
        if ignored(rel, folder):
            _count(fd, name, info, gone)
            remove(fd, name)
        elif folder:
            inner = open_dir(name, fd)
            try:
                _prune(inner, rel + "/", ignored, gone)
            finally:
                os.close(inner)


def _count(fd: int, name: str, info: os.stat_result, gone: list[int]) -> None:
    """Add the files (and their bytes) at `name` to `gone`, without following links."""
    if not stat.S_ISDIR(info.st_mode):
        gone[0] += 1
        gone[1] += info.st_size if stat.S_ISREG(info.st_mode) else 0
        return
    inner = open_dir(name, fd)
    try:
        with os.scandir(inner) as it:
            for entry in it:
                _count(inner, entry.name,
                       os.stat(entry.name, dir_fd=inner, follow_symlinks=False), gone)
    finally:
        os.close(inner)
