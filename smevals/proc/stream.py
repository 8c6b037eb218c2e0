"""Read a child's stdout and stderr while it runs, keeping at most `cap` bytes of each.

Bytes past the cap are read and dropped (so the child never blocks on a full pipe) and
counted, so the caller can say how much was written.
"""

from __future__ import annotations

import os
import selectors
import time
from typing import IO

_CHUNK = 1 << 16


class Reader:
    def __init__(self, streams: dict[str, IO[bytes]], cap: int) -> None:
        self.cap = cap
        self.kept = {name: bytearray() for name in streams}
        self.total = dict.fromkeys(streams, 0)
        self._nap = 0.001
        self._sel = selectors.DefaultSelector()
        for name, stream in streams.items():
            os.set_blocking(stream.fileno(), False)
            self._sel.register(stream, selectors.EVENT_READ, name)

    @property
    def open(self) -> bool:
        return bool(self._sel.get_map())

    @property
    def over_cap(self) -> bool:
        return any(n > self.cap for n in self.total.values())

    def read_for(self, seconds: float) -> None:
        """Wait up to `seconds` for data and read what is there. Once both streams are
        closed, only wait: 1 ms at first, doubling up to `seconds` (the child usually exits
        right after closing them)."""
        if not self.open:
            time.sleep(max(0.0, min(seconds, self._nap)))
            self._nap *= 2
            return
        for key, _ in self._sel.select(max(0.0, seconds)):
            self._read(key)

    def read_until_eof(self, seconds: float) -> None:
        """Read until both streams are closed by every writer, or `seconds` have passed."""
        end = time.monotonic() + seconds
        while self.open and (left := end - time.monotonic()) > 0:
            self.read_for(left)

    def close(self) -> None:
        self._sel.close()

    def _read(self, key: selectors.SelectorKey) -> None:
        try:
            chunk = os.read(key.fd, _CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            self._sel.unregister(key.fileobj)
            return
        name = key.data
        room = self.cap - len(self.kept[name])
        if room > 0:
            self.kept[name] += chunk[:room]
        self.total[name] += len(chunk)
