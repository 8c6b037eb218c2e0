"""`workspace.diff`: what the agent changed, as a unified diff against the starting files.

Git's layout, so viewers colour it: a `diff --git a/<path> b/<path>` header per file, then
`--- a/<path>` / `+++ b/<path>` (`/dev/null` for a new or a deleted file) and the hunks.
A binary file (a NUL byte, or not UTF-8) is named, not diffed (`Binary files ... differ`), as
is a file above DIFF_FILE_LIMIT; a symlink is named with its target (never followed) and a
FIFO, socket or device as special. The whole is capped at SMEVALS_MAX_DIFF_MB (8 MB), cut at a line.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator, Mapping

from smevals.evaldef.workspace import Starting
from smevals.files.regular import NotRegular, open_regular
from smevals.store.records import FileEntry

DIFF_NAME = "workspace.diff"
DIFF_FILE_LIMIT = 1 << 20          # a larger file is named, not diffed
DIFF_SETTING = "SMEVALS_MAX_DIFF_MB"  # the diff as a whole: 8 MB unless it says otherwise
DIFF_MB = 8
_DEV_NULL = "/dev/null"


def diff_text(start: Starting, fd: int, changed: list[str], added: list[str],
              deleted: list[str], final: Mapping[str, FileEntry]) -> tuple[str, int]:
    """The diff (at most SMEVALS_MAX_DIFF_MB, whole lines) and the bytes the whole diff took."""
    from smevals.files.regular import megabytes

    limit = megabytes(DIFF_SETTING, DIFF_MB)
    sources = start.by_rel()
    kept = dict(zip((f.rel for f in start.files), start.kept or (), strict=False))
    parts: list[str] = []
    size = written = 0
    for rel in sorted({*changed, *added, *deleted}):
        old = _kept(kept[rel]) if rel in kept else \
            _old(sources[rel].source.as_posix(), start.sha256[rel]) if rel in sources else None
        new = None if rel in deleted else _new(fd, rel, final[rel])
        for line in _file_diff(rel, old, new):
            length = len(line.encode("utf-8"))
            written += length
            if size + length <= limit and written == size + length:
                parts.append(line)
                size += length
    return "".join(parts), written


Side = bytes | str | None           # bytes; str: what it is instead (a link, too large ...)


def _old(path: str, sha256: str) -> Side:
    """A starting file as the Run began with it (the Eval's copy, when still the same)."""
    import hashlib

    data = _read(path, None)
    if isinstance(data, bytes) and hashlib.sha256(data).hexdigest() != sha256:
        return "changed in the Eval since the Run started"
    return data


def _kept(data: bytes) -> Side:
    """A starting file as the Run began with it, from the bytes hashed (and kept)."""
    return data if len(data) <= DIFF_FILE_LIMIT else f"{len(data)} bytes, too large to diff"


def _new(fd: int, rel: str, entry: FileEntry) -> Side:
    if "symlink" in entry:
        return f"a symlink to {entry['symlink']!r} (never followed)"
    if "sha256" not in entry:
        return "a special file (a FIFO, socket or device; never opened)"
    return _read(rel, fd)


def _read(path: str, fd: int | None) -> Side:
    try:
        handle, info = open_regular(path, fd)
    except NotRegular as exc:
        return str(exc)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    try:
        if info.st_size > DIFF_FILE_LIMIT:
            return f"{info.st_size} bytes, too large to diff"
        chunks = []
        while chunk := os.read(handle, 1 << 20):
            chunks.append(chunk)
            if sum(len(c) for c in chunks) > DIFF_FILE_LIMIT:
                return "too large to diff"
        return b"".join(chunks)
    finally:
        os.close(handle)


def _file_diff(rel: str, old: Side, new: Side) -> Iterator[str]:
    yield f"diff --git a/{rel} b/{rel}\n"
    if old is None:
        yield "new file\n"
    elif new is None:
        yield "deleted file\n"
    if isinstance(old, str) or isinstance(new, str):
        yield from _described(rel, old, new)
        return
    old_text, new_text = _text(old), _text(new)
    if old_text is None or new_text is None:
        yield (f"Binary files {'a/' + rel if old is not None else _DEV_NULL} and "
               f"{'b/' + rel if new is not None else _DEV_NULL} differ\n")
        return
    lines = _unified(_lines(old_text), _lines(new_text),
                     _DEV_NULL if old is None else f"a/{rel}",
                     _DEV_NULL if new is None else f"b/{rel}")
    for line in lines:
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def _unified(old: list[str], new: list[str], before: str, after: str) -> Iterator[str]:
    """The unified diff of two lists of lines (three lines of context), as difflib writes
    it, matched by `_Trimmed`."""
    for i, group in enumerate(_Trimmed(old, new).get_grouped_opcodes(3)):
        if i == 0:
            yield f"--- {before}\n"
            yield f"+++ {after}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_span(first[1], last[2])} +{_span(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in old[i1:i2])
                continue
            yield from ("-" + line for line in old[i1:i2])
            yield from ("+" + line for line in new[j1:j2])


def _span(start: int, stop: int) -> str:
    """A hunk's range in unified form: the first line (1-based) and the count, the count
    left out when it is 1 (an empty range names the line before it)."""
    count = stop - start
    if count == 1:
        return str(start + 1)
    return f"{start + 1 if count else start},{count}"


class _Trimmed(difflib.SequenceMatcher[str]):
    """difflib's matcher, run only on what lies between the lines both sides start with and
    the lines both end with (those are matched as they are). An agent mostly edits a few
    places of a long file: the middle is short, and difflib's search, quadratic in the
    lines it searches, is spared the rest (a file of many equal lines took 6 ms each)."""

    def __init__(self, old: list[str], new: list[str]):
        super().__init__(None, old, new)
        self._sides = old, new
        self._found: list[difflib.Match] | None = None

    def get_matching_blocks(self) -> list[difflib.Match]:
        if self._found is None:
            self._found = _blocks(*self._sides)
        return self._found


def _blocks(a: list[str], b: list[str]) -> list[difflib.Match]:
    head, most = 0, min(len(a), len(b))
    while head < most and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < most - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    inner = difflib.SequenceMatcher(None, a[head:len(a) - tail], b[head:len(b) - tail])
    blocks = [(0, 0, head)] + [(i + head, j + head, n)
                               for i, j, n in inner.get_matching_blocks() if n]
    blocks.append((len(a) - tail, len(b) - tail, tail))
    joined: list[list[int]] = []
    for i, j, n in blocks:
        if joined and joined[-1][0] + joined[-1][2] == i and joined[-1][1] + joined[-1][2] == j:
            joined[-1][2] += n
        elif n:
            joined.append([i, j, n])
    return [difflib.Match(i, j, n) for i, j, n in joined] + [difflib.Match(len(a), len(b), 0)]


def _described(rel: str, old: Side, new: Side) -> Iterator[str]:
    if isinstance(old, str):
        yield f"a/{rel} was {old}; not diffed\n"
    if isinstance(new, str):
        yield f"b/{rel} is {new}; not diffed\n"


def _lines(text: str) -> list[str]:
    """The lines of `text`, each with its LF (only LF ends a line, as in git)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _text(data: bytes | None) -> str | None:
    """The text of a file, "" for none; None for a binary file (a NUL byte, or not UTF-8)."""
    if data is None:
        return ""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
