"""What one command finds and caches while it runs, kept on one object per command.

The CLI makes a new `Command` for each command it runs (`command()`), so nothing found or
cached by one command leaks into the next in the same process (`smevals serve`, or tests
that run commands in-process): the damaged objects readers left out (what the command
warns about at its end, and `diff --format json` lists), the judge cache's bucket
listings, and the folders a revision was extracted to. Code run outside a command (the
library, a test calling a function) shares one process-wide `Command`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


class Command:
    """The state of one command (threads of the command share it: each part has a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.damaged: dict[tuple[str, str], str] = {}     # (store label, object rel) -> why
        self.judge_listings: dict[Path, dict[str, list[str]]] = {}   # bucket -> key -> names
        self.mirrors: dict[Path, Path] = {}   # a revision's extracted folder -> its repository
        # what the command worked out once and reuses (keys name their owner: see `memo`)
        self.memos: dict[str, dict[Any, Any]] = {}

    def note_damaged(self, label: str, rel: str, why: str) -> None:
        with self.lock:
            self.damaged[(label, rel)] = why

    def memo(self, owner: str) -> dict[Any, Any]:
        """The dict in which `owner` (a module's name) keeps what it found for this command."""
        with self.lock:
            return self.memos.setdefault(owner, {})

    def found_damaged(self) -> list[tuple[str, str, str]]:
        """(store label, object rel, why) of every object left out so far, sorted."""
        with self.lock:
            return sorted((label, rel, why) for (label, rel), why in self.damaged.items())


_current = Command()


def current() -> Command:
    """The running command's state."""
    return _current


@contextmanager
def command() -> Iterator[Command]:
    """A fresh `Command` for the block (one CLI command), the previous one restored after."""
    global _current
    before, _current = _current, Command()
    try:
        yield _current
    finally:
        _current = before
