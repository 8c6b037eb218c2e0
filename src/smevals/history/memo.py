"""Points already read, kept between commands in the cache folder (files/cachefile.py): one
file per set of Evals and reading options, a Point per (commit, Eval folder), and the
outside files each state of an Eval folder uses (states.py). A commit never changes, so a
Point read once is read again only when the file is deleted, the options differ, or smevals
is another version. Deleting the file only costs time."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, cast

from smevals.files import cachefile
from smevals.history.point import Point
from smevals.sides.read import SideSpec
from smevals.version import __version__

FORMAT = 4                  # 2: runner versions; 3: clipped intervals; 4: outside files (`uses`)
POINT_KEYS = frozenset(Point.__annotations__)
LIMIT = 20_000              # Points kept per file (the oldest read go first)


class Memo:
    def __init__(self, folders: list[Path], spec: SideSpec):
        parts = [str(FORMAT), __version__, repr(spec),
                 *(os.path.realpath(f) for f in folders)]
        digest = hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape"))
        self.path = str(cachefile.cache_dir() / f"log-{digest.hexdigest()[:20]}.marshal")
        self.points: dict[str, Any] = self._load() if cachefile.enabled() else {}
        self.changed = False

    def _load(self) -> dict[str, Any]:
        data = cachefile.read_marshal(self.path)
        return data if isinstance(data, dict) else {}

    def get(self, sha: str, folder: Path) -> Point | None:
        found = self.points.get(f"{sha}\0{folder}")
        if isinstance(found, dict) and found.keys() == POINT_KEYS \
                and isinstance(found["rows"], list) and isinstance(found["identities"], list) \
                and len(found["rows"]) == len(found["identities"]):
            return cast(Point, found)
        return None                     # not there, or not what this version writes

    def put(self, sha: str, folder: Path, point: Point) -> None:
        self.points[f"{sha}\0{folder}"] = point
        self.changed = True

    def get_uses(self, folder: Path, state: str) -> list[str] | None:
        """The outside files of the Eval in `folder` in the state `state` (uses.digest)."""
        found = self.points.get(f"uses\0{folder}\0{state}")
        if isinstance(found, list) and all(isinstance(p, str) for p in found):
            return found
        return None

    def put_uses(self, folder: Path, state: str, paths: list[str]) -> None:
        self.points[f"uses\0{folder}\0{state}"] = list(paths)
        self.changed = True

    def save(self) -> None:
        if not (self.changed and cachefile.enabled()):
            return
        keys = list(self.points)
        for key in keys[:max(0, len(keys) - LIMIT)]:
            del self.points[key]
        cachefile.write_marshal(self.path, self.points)
