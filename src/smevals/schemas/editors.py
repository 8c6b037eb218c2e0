"""JSON Schemas for editors, offline: `smevals schemas --write DIR [EVAL_OR_SUITE]...`, and
what `init` and `import` use to give a new Eval its own copy.

An authoring YAML file names its schema on its first line, as yaml-language-server (VS
Code's YAML extension) reads it: `# yaml-language-server: $schema=<path>`. The path is
relative to the file, so it resolves on any machine, with no network, in any clone.
"""

from __future__ import annotations

import os
import re
import stat
import uuid
from importlib import resources
from pathlib import Path

from smevals.errors import SmevalsError

# The schemas of the files an author writes (not of the records smevals writes).
AUTHORING = ("eval", "task", "config", "grader", "fixture")
# Where `init` and `import` put them, relative to the new Eval (hidden: the tool's copy;
# workers of `--dask` are not sent it).
PROJECT_DIR = ".smevals/schemas"
PREFIX = b"# yaml-language-server: $schema="
COMMENT = re.compile(rb"# yaml-language-server: \$schema=(\S*?)([a-z-]+)\.schema\.json[ \t]*")
FIRST_LINE = 4096           # a longer first line is not a schema comment
FOLDERS = ("tasks", "configs", "graders")


def schema_line(kind: str, file: Path, folder: Path) -> str:
    """The comment naming `folder`'s schema of `kind`, by its path relative to `file`."""
    rel = os.path.relpath(os.path.abspath(folder / f"{kind}.schema.json"),
                          os.path.dirname(os.path.abspath(file)))
    return f"{PREFIX.decode()}{Path(rel).as_posix()}"


def write_schemas(folder: Path) -> list[Path]:
    """Write the authoring schemas into `folder` (made if missing); return their paths."""
    if folder.exists() and not folder.is_dir():
        raise SmevalsError(f"{folder} is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SmevalsError(f"cannot make {folder}: {exc.strerror}") from None
    source = resources.files("smevals").joinpath("schemas")
    out = []
    for kind in AUTHORING:
        target = folder / f"{kind}.schema.json"
        _replace(target, source.joinpath(target.name).read_bytes(), None)
        out.append(target)
    return out


def point_comments(evals: list[Path], folder: Path) -> list[Path]:
    """Point the schema comment of each authoring YAML file of `evals` at `folder`; return
    the files changed. Only a first line that already is such a comment, for one of
    AUTHORING, is rewritten; links, stores and hidden folders are left alone."""
    changed = []
    for eval_dir in evals:
        for path in _authoring_files(eval_dir):
            if _point(path, folder):
                changed.append(path)
    return changed


def _authoring_files(eval_dir: Path) -> list[Path]:
    out = [eval_dir / "eval.yaml"]
    for name in FOLDERS:
        out += _yaml_under(eval_dir / name)
    return [p for p in out if _regular(p)]


def _yaml_under(folder: Path) -> list[Path]:
    if not folder.is_dir() or folder.is_symlink() or _is_store(folder):
        return []
    out: list[Path] = []
    with os.scandir(folder) as it:
        for entry in sorted(it, key=lambda e: e.name):
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                out += _yaml_under(Path(entry.path))
            elif entry.name.endswith((".yaml", ".yml")):
                out.append(Path(entry.path))
    return out


def _is_store(folder: Path) -> bool:
    return (folder / "runs").is_dir() or (folder / "grades").is_dir()


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _point(path: Path, folder: Path) -> bool:
    with open(path, "rb") as f:          # a regular file (checked): opening cannot block
        head = f.readline(FIRST_LINE)
        if not head.startswith(PREFIX):
            return False
        rest = f.read()
    line, ending = head.rstrip(b"\r\n"), head[len(head.rstrip(b"\r\n")):]
    match = COMMENT.fullmatch(line)
    if not match or match[2].decode() not in AUTHORING:
        return False
    new = schema_line(match[2].decode(), path, folder).encode() + ending
    if new == head:
        return False
    _replace(path, new + rest, stat.S_IMODE(os.lstat(path).st_mode))
    return True


def _replace(target: Path, data: bytes, mode: int | None) -> None:
    """Write `data` to `target` through a new file renamed over it (a link at `target` is
    replaced, never followed); `mode` None: a new file's (0o666 less the umask)."""
    temp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                     0o666 if mode is None else 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise SmevalsError(f"cannot write {target}: {exc.strerror}") from None

