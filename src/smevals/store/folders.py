"""The store's own folders are real folders, never a symlink that sends a write elsewhere.

`runs/`, `grades/`, `judges/`, `.staging/` and every folder below them down to an object's
parent are made and entered one part at a time, each opened relative to the one above it
with O_NOFOLLOW: a part that is a symlink (a commit can hold one) or not a folder at all is
refused with its name (exit 2) before anything is written, removed or renamed through it,
and the check and the write that follows see the same folder. `verify` reports such a
folder as damage. The store's root may itself be a link (`results -> /data/results`): it
is where you chose to keep the store.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.files.durable import defer_fsync
from smevals.files.regular import describe
from smevals.files.workspace import open_dir
from smevals.phases import phase
from smevals.store.layout import STAGING

TOP = ("runs", "grades", "judges", STAGING)      # every folder smevals makes at the root
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW_DIR = _DIR | getattr(os, "O_NOFOLLOW", 0)


class NotAFolder(SmevalsError):
    """A store folder is a symlink or a file (exit 2; the message names it)."""


@contextmanager
def named(folder: Path) -> Iterator[None]:
    """An OSError raised inside names its file by its whole path: a call relative to a
    folder descriptor names only the part below `folder` (or nothing)."""
    try:
        yield
    except OSError as exc:
        name = exc.filename
        if name is None or (isinstance(name, str) and not os.path.isabs(name)):
            exc.filename = str(folder if name is None else folder / name)
        raise


def open_folder(root: Path, rel: str, create: bool = True) -> int:
    """A descriptor of the store folder `rel` (parts joined by `/`) below `root`, each
    missing part made when `create` (its parent fsynced with the batch, durable.py).
    Raises NotAFolder naming the first part that is not a real folder, FileNotFoundError
    for a missing one otherwise."""
    try:
        fd = os.open(root, _DIR)
    except FileNotFoundError:
        if not create:
            raise
        os.makedirs(root, exist_ok=True)        # the root: where the user keeps the store
        fd = os.open(root, _DIR)
    done = 0                                    # parts entered (named only on an error)
    parts = rel.split("/")
    try:
        for part in parts:
            inner = _enter(fd, part, root, parts[:done], create)
            done += 1
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


def _enter(fd: int, part: str, root: Path, above: list[str], create: bool) -> int:
    """A descriptor of `part` in the folder `fd` (`root` / `above`), made when missing."""
    for _ in range(2):
        try:
            return os.open(part, _NOFOLLOW_DIR, dir_fd=fd)
        except FileNotFoundError as exc:
            if not create:
                exc.filename = str(root.joinpath(*above, part))
                raise
        except OSError as exc:
            shown = root.joinpath(*above, part)
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise NotAFolder(refusal(shown, fd, part)) from None
            exc.filename = str(shown)
            raise
        try:
            with phase("mkdir"):
                os.mkdir(part, dir_fd=fd)
        except FileExistsError:
            continue                    # made meanwhile (another writer): enter it
        except OSError as exc:
            exc.filename = str(root.joinpath(*above, part))
            raise
        defer_fsync("/".join((str(root), *above)))
    return open_dir(part, fd)


def refusal(shown: Path, fd: int | None, part: str) -> str:
    return (f"{shown} is {describe(part, fd)}, not a folder: smevals never writes through "
            "it (remove it, then run `smevals verify`)")


def refuse_links(root: Path) -> None:
    """Raise NotAFolder when one of the store's top folders is not a real folder: checked
    before a command writes anything (and before any runner starts)."""
    for name, _why in problems(root):
        raise NotAFolder(refusal(root / name, None, str(root / name)))


def problems(root: Path) -> list[tuple[str, str]]:
    """(folder, why) for each of the store's top folders that is there but is not a real
    folder (for `verify`, and for readers, who never look through it)."""
    out = []
    for name in TOP:
        path = root / name
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode):
            out.append((name, f"{describe(str(path))}, not a folder: smevals never reads or "
                              "writes through it"))
    return out
