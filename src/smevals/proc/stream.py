"""Read a child's stdout and stderr while it runs, keeping at most `cap` bytes of each.

Bytes past the cap are read and dropped (so the child never blocks on a full pipe) and
counted, so the caller can say how much was written.
"""

from __future__ import annotations

import os
import selectors
import time
from collections.abc import Callable
from typing import IO

_CHUNK = 1 << 16


class Reader:
    """Both streams of a child, and (where the OS has pidfds) a handle that becomes ready
    when the child exits, so waiting for output and for the exit is one select.

    `watch`, when given, sees each chunk read from stdout as it arrives and says whether
    it shows activity (True); `active` is when stdout last showed some (any byte, without
    a `watch`), for an idle deadline."""

    def __init__(self, streams: dict[str, IO[bytes]], cap: int, pid: int,
                 watch: Callable[[bytes], bool] | None = None) -> None:
        self.cap = cap
        self.watch = watch
        self.active = time.monotonic()
        self.kept = {name: bytearray() for name in streams}
        self.total = dict.fromkeys(streams, 0)
        self._nap = 0.001
        self._sel = selectors.DefaultSelector()
        for name, stream in streams.items():
            os.set_blocking(stream.fileno(), False)
            self._sel.register(stream, selectors.EVENT_READ, name)
        self._pidfd = _pidfd(pid)
        if self._pidfd is not None:
            self._sel.register(self._pidfd, selectors.EVENT_READ, None)

    @property
    def open(self) -> bool:
        """Whether a stream is still open."""
        return any(key.data is not None for key in self._sel.get_map().values())

    @property
    def over_cap(self) -> bool:
        return any(n > self.cap for n in self.total.values())

    def read_for(self, seconds: float) -> None:
        """Wait up to `seconds` for data or the exit, and read what is there. Without a
        pidfd, once both streams are closed, only wait: 1 ms at first, doubling up to
        `seconds` (the child usually exits right after closing them)."""
        if not self._sel.get_map():
            time.sleep(max(0.0, min(seconds, self._nap)))
            self._nap *= 2
            return
        for key, _ in self._sel.select(max(0.0, seconds)):
            if key.data is None:            # the child exited: its pidfd is done
                self._sel.unregister(key.fileobj)
            else:
                self._read(key)

    def read_until_eof(self, seconds: float) -> None:
        """Read until both streams are closed by every writer, or `seconds` have passed."""
        end = time.monotonic() + seconds
        while self.open and (left := end - time.monotonic()) > 0:
            self.read_for(left)

    def close(self) -> None:
        self._sel.close()
        if self._pidfd is not None:
            os.close(self._pidfd)

    def _read(self, key: selectors.SelectorKey) -> None:
        try:
            chunk = os.read(key.fd, _CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            self._sel.unregister(key.fileobj)
            return
        name = key.data
        if name == "stdout" and (self.watch is None or _shows_activity(self.watch, chunk)):
            self.active = time.monotonic()
        room = self.cap - len(self.kept[name])
        if room > 0:
            self.kept[name] += chunk[:room]
        self.total[name] += len(chunk)


def _shows_activity(watch: Callable[[bytes], bool], chunk: bytes) -> bool:
    """What `watch` says of `chunk`; one that fails counts the chunk as activity."""
    try:
        return bool(watch(chunk))
    except Exception:
        return True


def _pidfd(pid: int) -> int | None:
    """A pidfd for `pid` (Linux 5.3+), else None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None
