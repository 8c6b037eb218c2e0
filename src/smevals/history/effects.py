"""What the grader did and what the evidence did, where a config x model's grader version
changed between two listed commits: `diff`'s split (diff/split.py) of that pair of commits,
read once and kept in the cache folder (a commit never changes, so neither does the split
between two of them)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from smevals.diff.pairs import eval_diff
from smevals.diff.splitview import split_json
from smevals.errors import SmevalsError
from smevals.files import cachefile
from smevals.sides.read import SideSpec
from smevals.version import __version__

FORMAT = 1
ALPHA = 0.05                # log's intervals are 95% ones
LIMIT = 2_000               # pairs of commits kept per file (the oldest read go first)

Splits = dict[str, Any]     # "config\0model" -> the group's `split` of diff's JSON, or None


class Effects:
    """The splits of one Eval between two commits, each pair of commits read once."""

    def __init__(self, spec: SideSpec):
        digest = hashlib.sha256("\0".join([str(FORMAT), __version__, repr(spec)]).encode())
        self.path = str(cachefile.cache_dir() / f"logsplit-{digest.hexdigest()[:20]}.marshal")
        self.spec = spec
        self.known: dict[str, Any] | None = None
        self.changed = False

    def of(self, folder: Path, before: str, now: str) -> Splits:
        """Per config x model, the split of its change from `before` to `now` (empty when
        either commit cannot be read as a side: the marks then say no more than before)."""
        known = self._known()
        key = f"{before}\0{now}\0{os.path.realpath(folder)}"
        found = known.get(key)
        if isinstance(found, dict):
            return found
        try:
            diff = eval_diff(folder, before, now, self.spec, ALPHA)
        except SmevalsError:
            diff = None
        splits: Splits = {} if diff is None else {
            f"{g.config}\0{g.model}": split_json(g, ALPHA) for g in diff.groups}
        known[key] = splits
        self.changed = True
        return splits

    def _known(self) -> dict[str, Any]:
        if self.known is None:
            data = cachefile.read_marshal(self.path) if cachefile.enabled() else None
            self.known = data if isinstance(data, dict) else {}
        return self.known

    def save(self) -> None:
        if not (self.changed and cachefile.enabled() and self.known is not None):
            return
        keys = list(self.known)
        for key in keys[:max(0, len(keys) - LIMIT)]:
            del self.known[key]
        cachefile.write_marshal(self.path, self.known)
