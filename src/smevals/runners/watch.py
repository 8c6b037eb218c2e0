"""A harness's event stream as it arrives, and its paths made the workspace's own.

`LineWatch` sees each chunk of the harness's stdout while it runs (smevals.proc calls it):
it notes when each line ended (the transcript's `t`, seconds since the Run started) and
tells the idle deadline whether the chunk showed progress. An event the harness's
`retrying` says is only a retry notice (Codex's "Reconnecting...", which it prints for ever
when its server is down) is no progress.

`relative` rewrites the workspace's absolute path in every string of the transcript (a
tool call's `file_path`, a command's `cd`, a file change's `path`) to a path relative to the
workspace, so that the same call gives the same arguments in every Run: the host path of
the Run's staging folder (and its real path) and `/workspace`, where a sandbox shows it.
"""

from __future__ import annotations

import os
import re
import time
from array import array
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import orjson

JUDGED = 16 * 1024          # bytes of a line parsed to judge it; a longer one is progress
MAX_TIMES = 1_000_000       # lines timed; later ones have no `t`
VIEW_ROOT = "/workspace"    # the workspace as a sandbox's filesystem view shows it

Event = dict[str, Any]


class LineWatch:
    """Called with each chunk of stdout (from the reading thread); True when it showed
    progress. `times[i]` is when line i + 1 ended, in seconds since `start`."""

    def __init__(self, retrying: Callable[[Event], bool], start: float | None = None) -> None:
        self.retrying = retrying
        self.start = time.monotonic() if start is None else start
        self.times = array("d")
        self.line = bytearray()         # the line being read (its first JUDGED bytes)
        self.long = False               # it is longer than that
        self.last: float | None = None  # when the last chunk arrived

    def __call__(self, chunk: bytes) -> bool:
        now = self.last = time.monotonic() - self.start
        progress = False
        pieces = chunk.split(b"\n")
        for index, piece in enumerate(pieces):
            self._add(piece)
            if index == len(pieces) - 1:
                break
            progress = self._ended(now) or progress
        return progress or bool(pieces[-1])     # part of a line: progress until judged

    def _add(self, piece: bytes) -> None:
        room = JUDGED - len(self.line)
        if len(piece) > room:
            self.long = True
        if room > 0:
            self.line += piece[:room]

    def _ended(self, now: float) -> bool:
        if len(self.times) < MAX_TIMES:
            self.times.append(now)
        line, long = bytes(self.line), self.long
        self.line, self.long = bytearray(), False
        if long or not line.strip():
            return bool(long)
        try:
            event = orjson.loads(line)
        except orjson.JSONDecodeError:
            return True
        return not (isinstance(event, dict) and self.retrying(event))

    def at(self, number: int) -> float | None:
        """When line `number` (1 for the first) ended (the stream's last line, cut off:
        when its last chunk came), or None (not timed)."""
        if 1 <= number <= len(self.times):
            return round(self.times[number - 1], 3)
        if number == len(self.times) + 1 and self.last is not None:
            return round(self.last, 3)
        return None


def roots(workspace: Path) -> list[str]:
    """The workspace's absolute paths that may appear in a harness's stream, longest first."""
    found = {str(workspace), os.path.realpath(workspace), VIEW_ROOT}
    return sorted((r.rstrip("/") for r in found if r.rstrip("/")), key=len, reverse=True)


_END = r"""(?=[\s"'`:;,)\]}>|&]|$)"""


def pattern(paths: Iterable[str]) -> re.Pattern[str]:
    """Any of `paths` as a whole path: ending there (made `.`), or followed by `/` and a
    name (the prefix removed)."""
    either = "|".join(re.escape(p) for p in paths)
    return re.compile(rf"(?<![\w./-])(?:{either})(?:(?P<dot>/?{_END})|/(?=[^\s/]))")


def relative(value: object, paths: re.Pattern[str]) -> Any:
    """`value` with every string's workspace paths made relative (a new value)."""
    if isinstance(value, str):
        return paths.sub(_replacement, value) if "/" in value else value
    if isinstance(value, list):
        return [relative(item, paths) for item in value]
    if isinstance(value, dict):
        return {key: relative(item, paths) for key, item in value.items()}
    return value


def _replacement(match: re.Match[str]) -> str:
    return "." if match.group("dot") is not None else ""
