"""Text that runners and checkers print is stored as UTF-8 with LF newlines."""

from __future__ import annotations

from pathlib import Path

TAIL_BYTES = 16384      # how much of a file's end `tail` reads


def normalise(data: bytes) -> tuple[str, bool]:
    """(text, whether undecodable bytes were replaced) with CRLF and CR turned into LF."""
    try:
        text = data.decode("utf-8")
        replaced = False
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        replaced = True
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, replaced


def tail(path: Path, count: int = 5, width: int = 160) -> tuple[list[str], int]:
    """The last `count` non-blank lines of a text file, each cut to `width` characters, and
    how many non-blank lines the part read holds; ([], 0) when there is no such file."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - TAIL_BYTES))
            data = f.read()
    except OSError:
        return [], 0
    lines = [line.rstrip() for line in normalise(data)[0].split("\n") if line.strip()]
    if size > TAIL_BYTES and lines:
        lines = lines[1:]                      # the first line read may be cut
    cut = [line if len(line) <= width else line[:width - 3] + "..." for line in lines[-count:]]
    return cut, len(lines)
