"""SIGINT and SIGTERM stop the `smevals` command the same way, at every moment: exit 130.

`install` is the first thing the command does (smevals/__main__.py), before it imports
anything else: from then on both signals raise KeyboardInterrupt in the main thread, and
the command ends every child tree and exits 130 (docs/reliability.md#signals). `deferred`
holds them back while the main thread starts a child and registers it, so that no child
is ever started and left unknown to the guardian. `finish` gives the exit code once the
command is over: 130 if a signal came at any point, even one the command's own code
swallowed; a signal that comes after that is ignored (the command is over).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["INTERRUPTED", "deferred", "finish", "forget", "install", "received", "stop"]

INTERRUPTED = 130
STOPPING = (signal.SIGINT, signal.SIGTERM)

_state = {"got": 0, "held": 0, "pending": 0, "installed": 0}


def stop(signum: int, frame: FrameType | None) -> None:
    """The handler: note the signal, and interrupt the main thread unless held back."""
    _state["got"] = signum
    if _state["held"]:
        _state["pending"] = signum
        return
    raise KeyboardInterrupt


def install() -> None:
    """Make SIGINT and SIGTERM interrupt the main thread (call it from the main thread)."""
    for sig in STOPPING:
        signal.signal(sig, stop)
    _state["installed"] = 1


@contextmanager
def deferred() -> Iterator[None]:
    """In the main thread of the command, hold an interrupt back until the block ends (then
    raise it); elsewhere, and when `install` was not called, do nothing."""
    if not _state["installed"] or threading.current_thread() is not threading.main_thread():
        yield
        return
    _state["held"] += 1
    try:
        yield
    finally:
        _state["held"] -= 1
        if not _state["held"] and _state["pending"]:
            _state["pending"] = 0
            raise KeyboardInterrupt


def received() -> bool:
    """Whether SIGINT or SIGTERM came. The KeyboardInterrupt it raised may reach the top
    wrapped in another exception by the code it hit (a class body's `__set_name__` turns it
    into a RuntimeError): with a signal received, that is the interrupt, not a bug."""
    return bool(_state["got"])


def forget() -> None:
    """The interrupt was this command's normal end (`serve`): it does not make the exit
    130."""
    _state["got"] = 0


def finish(code: int) -> int:
    """The command's exit code now that it is over: 130 after any SIGINT or SIGTERM; from
    now on both are ignored, so the interpreter's own shutdown cannot be interrupted."""
    for sig in STOPPING:
        signal.signal(sig, signal.SIG_IGN)
    return INTERRUPTED if _state["got"] else code
