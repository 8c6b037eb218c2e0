"""Doing a long list of independent work items on two cores: a forked helper does the
second half while this process does the first.

Parsing 100,000 records costs seconds of pure Python, which one process cannot spread
over cores. The helper sends its results back in marshal form (plain data only). When the
process cannot fork, runs other threads (forking them is unsafe), or the list is short,
everything is done here. A helper that fails costs only time: its half is redone here.
"""

from __future__ import annotations

import marshal
import os
import tempfile
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def in_halves(items: list[T], work: Callable[[list[T]], list[Any]],
              minimum: int) -> list[Any]:
    """`work(items)`, with the second half done by a forked helper at the same time when
    there are at least `minimum` items."""
    if len(items) < minimum or not hasattr(os, "fork") or threading.active_count() > 1:
        return work(items)
    half = len(items) // 2
    with tempfile.TemporaryFile() as out:
        pid = os.fork()
        if pid == 0:                           # the helper: nothing here may return
            code = 1
            try:
                out.write(marshal.dumps(work(items[half:])))
                out.flush()
                code = 0
            finally:
                os._exit(code)
        try:
            first = work(items[:half])
        finally:
            status = os.waitpid(pid, 0)[1]
        second = _result(out, status, len(items) - half)
    return first + (second if second is not None else work(items[half:]))


def _result(out: Any, status: int, count: int) -> list[Any] | None:
    if os.waitstatus_to_exitcode(status) != 0:
        return None
    out.seek(0)
    try:
        found = marshal.loads(out.read())
    except (EOFError, ValueError, TypeError):
        return None
    return found if isinstance(found, list) and len(found) == count else None
