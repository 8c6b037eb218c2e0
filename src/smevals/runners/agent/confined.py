"""The agent's file tools, confined to the Run's workspace whatever the model asks.

A path is relative to the workspace: an absolute path, a `..` part or a NUL byte is refused
before anything is opened. Folders are entered one part at a time relative to the one above
(openat with O_NOFOLLOW | O_DIRECTORY), so a symlink anywhere on the way, even one the agent
made with `bash`, is refused, never followed. A file is read only when it is a regular file
(O_NOFOLLOW | O_NONBLOCK, then fstat: never a FIFO, a device or a link); a write goes to a
new file that then replaces the name, so it never writes through a link or a hard link into
a file outside. Sizes are capped: a read shows the first `cap` bytes, a write above its cap
is refused, and so is one past the Run's budget (WRITE_BUDGET), a listing stops at LIST_CAP
entries and LIST_DEPTH folders down.
"""

from __future__ import annotations

import errno
import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from smevals.files.regular import NotRegular, describe, open_regular
from smevals.files.workspace import open_dir

LIST_CAP = 1000                  # entries shown by list_files
LIST_DEPTH = 32                  # folders below this depth are not entered by list_files
WRITE_CAP = 1 << 20              # bytes a write_file may write
WRITE_BUDGET = 64 << 20         # bytes all the write_file calls of a Run may write
READ_CAP = 1 << 20               # bytes read_file reads (the tool output cap applies after)
# smevals' own files in a Run's workspace: never "the agent's work"
RESERVED = frozenset({"output.txt", "stderr.txt", "smevals-usage.json", "transcript.jsonl",
                      "workspace.diff", "run.json"})
_NEW = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_CLOEXEC", 0))


class ToolError(Exception):
    """What went wrong with a tool call, in words for the model (its tool result)."""


def split(path: object) -> list[str]:
    """The parts of a workspace-relative path (empty for the workspace itself)."""
    if not isinstance(path, str):
        raise ToolError("`path` must be a string")
    if "\0" in path:
        raise ToolError("`path` holds a NUL byte")
    if path.startswith("/") or path.startswith("~"):
        raise ToolError(f"{path!r} is not relative to the workspace: give a relative path "
                        "such as 'src/main.py'")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ToolError(f"{path!r} goes up with '..': paths stay inside the workspace")
    return parts


@contextmanager
def folder(root: Path, parts: list[str], create: bool = False) -> Iterator[int]:
    """A descriptor of the folder `parts` below `root`, entered one part at a time without
    following a link (missing parts made when `create`)."""
    fd = open_dir(root)
    try:
        for index, part in enumerate(parts):
            inner = _enter(fd, part, "/".join(parts[:index + 1]), create)
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _enter(fd: int, part: str, shown: str, create: bool) -> int:
    try:
        return open_dir(part, fd)
    except FileNotFoundError:
        if not create:
            raise ToolError(f"no such folder: {shown}") from None
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise ToolError(f"{shown} is {describe(part, fd)}, not a folder "
                            "(links are never followed)") from None
        raise ToolError(f"cannot open {shown}: {error.strerror}") from None
    try:
        os.mkdir(part, 0o777, dir_fd=fd)
        return open_dir(part, fd)
    except OSError as error:
        raise ToolError(f"cannot make the folder {shown}: {error.strerror}") from None


def read_file(root: Path, path: object, cap: int = READ_CAP) -> str:
    """The text of a regular file (its first `cap` bytes; undecodable bytes replaced)."""
    parts = split(path)
    if not parts:
        raise ToolError("give the path of a file, not of the workspace")
    with folder(root, parts[:-1]) as fd:
        try:
            handle, info = open_regular(parts[-1], fd)
        except FileNotFoundError:
            raise ToolError(f"no such file: {path}") from None
        except NotRegular:
            raise ToolError(f"{path} is {describe(parts[-1], fd)}: not a regular file, not "
                            "read (links are never followed)") from None
        except OSError as error:
            raise ToolError(f"cannot read {path}: {error.strerror}") from None
    try:
        data = os.read(handle, cap) if info.st_size else b""
    finally:
        os.close(handle)
    text = data.decode("utf-8", "replace")
    if info.st_size > len(data):
        text += f"\n[... {info.st_size - len(data)} more bytes not shown]"
    return text


def write_file(root: Path, path: object, content: object, cap: int = WRITE_CAP) -> str:
    """Write `content` (UTF-8) to `path`, its folders made; what was done, in words."""
    parts = split(path)
    if not parts:
        raise ToolError("give the path of a file, not of the workspace")
    if not isinstance(content, str):
        raise ToolError("`content` must be a string")
    data = content.encode("utf-8", "replace")
    if len(data) > cap:
        raise ToolError(f"content of {len(data)} bytes is above the {cap} byte limit of a write")
    if len(parts) == 1 and parts[0] in RESERVED:
        raise ToolError(f"{parts[0]} is a name smevals keeps for itself; choose another")
    with folder(root, parts[:-1], create=True) as fd:
        _replace(fd, parts[-1], data, str(path))
    return f"wrote {len(data)} bytes to {'/'.join(parts)}"


def _replace(fd: int, name: str, data: bytes, shown: str) -> None:
    temp = f".smevals-write-{uuid.uuid4().hex}"
    handle = os.open(temp, _NEW, 0o644, dir_fd=fd)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
    except OSError as error:
        os.unlink(temp, dir_fd=fd)
        if error.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
            raise ToolError(f"{shown} is a folder, not written") from None
        raise ToolError(f"cannot write {shown}: {error.strerror}") from None


def list_files(root: Path, path: object = ".", cap: int = LIST_CAP) -> str:
    """Every entry below `path`, one a line: folders end in `/`, a link shows its target."""
    parts = split("." if path is None else path)
    lines: list[str] = []
    with folder(root, parts) as fd:
        _list(fd, "", lines, cap + 1, LIST_DEPTH)
    if not lines:
        return "(empty)"
    if len(lines) > cap:
        return "\n".join(lines[:cap]) + f"\n[... more entries not listed: the first {cap}]"
    return "\n".join(lines)


def _list(fd: int, prefix: str, lines: list[str], most: int, depth: int) -> None:
    with os.scandir(fd) as entries:
        names = sorted(entry.name for entry in entries)
    for name in names:
        if len(lines) >= most:
            return
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if stat.S_ISLNK(info.st_mode):
            lines.append(f"{prefix}{name} -> {os.readlink(name, dir_fd=fd)}")
        elif stat.S_ISDIR(info.st_mode) and depth == 0:
            lines.append(f"{prefix}{name}/ [not entered: deeper than {LIST_DEPTH} folders]")
        elif stat.S_ISDIR(info.st_mode):
            lines.append(f"{prefix}{name}/")
            inner = open_dir(name, fd)
            try:
                _list(inner, f"{prefix}{name}/", lines, most, depth - 1)
            finally:
                os.close(inner)
        else:
            lines.append(prefix + name)
