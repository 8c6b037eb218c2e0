"""What a runner leaves in its workspace is bounded before any byte of it is read.

A Run keeps at most `SMEVALS_MAX_RUN_MB` megabytes (256 unless set) and
`SMEVALS_MAX_RUN_FILES` files and folders (10,000 unless set) of the runner's files, in
folders nested at most MAX_DEPTH deep. The workspace is walked once right after the runner,
in name order, never following a link and never opening a file: a file's size is the one
`lstat` gives, so a 10 GB sparse file is refused by its size before it is hashed or copied.
What fits is kept; the first file (or folder) past a limit and everything after it is
removed, and the Run fails, naming that file, its size and the setting that raises the limit.

Not counted: the names smevals writes or removes itself at the top of a Run (`output.txt`,
`stderr.txt`, the usage file, `workspace.diff`, `run.json`: bounded on their own), and a
Task's starting files left exactly as they were copied in (they are removed when the Run
settles, evaldef/workspace.py).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field

from smevals.errors import SmevalsError
from smevals.evaldef.workspace import Stamps, stamp_of
from smevals.files.regular import megabytes
from smevals.files.workspace import open_dir, remove
from smevals.store.records import Failure

SIZE_SETTING = "SMEVALS_MAX_RUN_MB"
SIZE_MB = 256
COUNT_SETTING = "SMEVALS_MAX_RUN_FILES"
COUNT = 10_000
MAX_DEPTH = 64
# written or removed by smevals itself, each bounded on its own (run/attempt.py)
OWN_NAMES = frozenset({"output.txt", "stderr.txt", "smevals-usage.json", "workspace.diff",
                       "run.json"})


@dataclass(frozen=True)
class Limits:
    size: int           # bytes
    count: int          # files and folders


def limits() -> Limits:
    """The limits of a Run's files from the environment (a malformed setting is a usage
    error: exit 2, said before any runner starts)."""
    return Limits(megabytes(SIZE_SETTING, SIZE_MB), whole_number(COUNT_SETTING, COUNT))


def whole_number(setting: str, default: int) -> int:
    text = os.environ.get(setting, "").strip()
    if not text:
        return default
    if not text.isdigit() or not 0 < int(text) < 1 << 40:
        raise SmevalsError(f"{setting}: '{text}' is not a number of files (a whole number "
                           "above 0)")
    return int(text)


@dataclass
class _Walk:
    limits: Limits
    stamps: Stamps
    size: int = 0
    count: int = 0
    over: list[str] = field(default_factory=list)       # why the first one was not kept
    dropped: int = 0


def bound(fd: int, stamps: Stamps | None = None, found: Limits | None = None
          ) -> Failure | None:
    """Remove from the workspace `fd` what is past the limits (see the module); why the Run
    fails, or None when everything fits. `stamps` are the starting files' as copied in."""
    walk = _Walk(found or limits(), stamps or {})
    _folder(walk, fd, "", 0)
    if not walk.over:
        return None
    more = f" (and {walk.dropped - 1} more after it)" if walk.dropped > 1 else ""
    return {"kind": "artifact", "detail": f"{walk.over[0]}: it was not kept{more}, and the Run "
            "counts as failed"}


def _folder(walk: _Walk, fd: int, prefix: str, depth: int) -> None:
    with os.scandir(fd) as it:
        names = sorted(entry.name for entry in it)
    for name in names:
        rel = prefix + name
        if not prefix and name in OWN_NAMES:
            continue
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        if walk.stamps.get(rel) == stamp_of(info):
            continue                        # a starting file as it was copied in
        why = _past(walk, rel, info, depth)
        if why is not None or walk.over:
            walk.over.append(why or "")
            walk.dropped += 1
            remove(fd, name)
            continue
        if stat.S_ISDIR(info.st_mode):
            inner = open_dir(name, fd)
            try:
                _folder(walk, inner, rel + "/", depth + 1)
            finally:
                os.close(inner)


def _past(walk: _Walk, rel: str, info: os.stat_result, depth: int) -> str | None:
    """Why `rel` is past a limit (counting it in when it is not), or None."""
    limits = walk.limits
    if walk.over:
        return None
    if stat.S_ISDIR(info.st_mode) and depth + 1 >= MAX_DEPTH:
        return f"{rel} is a folder nested {depth + 1} deep, past the {MAX_DEPTH} levels a Run " \
               "may hold"
    if walk.count + 1 > limits.count:
        return (f"{rel} is past the {limits.count} files and folders a Run may keep "
                f"({COUNT_SETTING} raises it)")
    size = info.st_size if stat.S_ISREG(info.st_mode) else 0
    if walk.size + size > limits.size:
        return (f"{rel} ({size} bytes) takes the runner's files past the "
                f"{limits.size / (1 << 20):g} MB a Run may keep ({SIZE_SETTING} raises it)")
    walk.count += 1
    walk.size += size
    return None
