"""What travels between a worker and the client: one object packed (`Packed`) and judge
cache entries (`Entries`). The worker packs (worker.py), the client writes them through the
store (unpack.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Packed:
    """One object on its way to the client: record bytes, files (path, mode, bytes or a
    symlink target)."""

    kind: str
    rel: str
    record: bytes
    files: tuple[tuple[str, int, bytes | None, str | None], ...]


Entries = tuple[tuple[str, bytes], ...]        # judge cache entries: (key, file bytes)
