"""The Evals `serve` shows, read again whenever their files change.

A fingerprint of each Eval (the stat stamps of its authoring files, and the store's
listing: every object folder with its record's stat stamp, which the store's index cache
keeps anyway) is taken at most once a second. When it changes, the Eval is read again
through the index cache, so a Run or Grade that lands appears without a restart. When
reading fails (say, a YAML file is half-written), the last good reading is kept and the
error is shown on the page.

With a History page (`serve --history N`), the commit HEAD names is part of the
fingerprint: a commit (or a checkout, a reset) makes the pages read the history again.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.site.data import Loaded
from smevals.site.history import LiveHistory
from smevals.store import index
from smevals.store.layout import KINDS

Loader = Callable[[], Loaded]
AUTHORING = ("eval.yaml", "tasks", "configs", "graders", "checkers")
MAX_FILES = 5000
MIN_INTERVAL = 1.0


def fingerprint(folder: Path, store_root: Path) -> str:
    digest = hashlib.sha256()
    for name in AUTHORING:
        for line in _stamps(folder / name):
            digest.update(line.encode("utf-8", "surrogateescape"))
    for kind in KINDS:
        digest.update(repr(index.listing(store_root, kind)[:2]).encode("utf-8", "backslashreplace"))
    return digest.hexdigest()[:16]


def _stamps(path: Path) -> list[str]:
    out: list[str] = []
    try:
        st = os.stat(path)
    except OSError:
        return out
    out.append(f"{path}:{st.st_mtime_ns}:{st.st_size}\0")
    if path.is_dir():
        for parent, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                try:
                    st = os.stat(os.path.join(parent, name))
                except OSError:
                    continue
                out.append(f"{parent}/{name}:{st.st_mtime_ns}:{st.st_size}\0")
            if len(out) > MAX_FILES:
                break
    return out


class LiveEval:
    def __init__(self, folder: Path, load: Loader, history: LiveHistory | None = None):
        self.folder = folder
        self.load = load
        self.history = history
        self.loaded = load()
        self.stamp = self._stamp()
        self.error: str | None = None

    def _stamp(self) -> str:
        stamp = fingerprint(self.folder, self.loaded.store.root)
        return stamp if self.history is None else f"{stamp}-{(self.history.check() or '')[:12]}"

    def refresh(self) -> None:
        stamp = self._stamp()
        if stamp == self.stamp:
            return
        try:
            self.loaded = self.load()
        except (SmevalsError, OSError) as exc:
            self.error = str(exc)
        else:
            self.error = None
        self.stamp = self._stamp()


class Live:
    """Every Eval of the server; `lock` guards reading them and making pages from them."""

    def __init__(self, sources: list[tuple[Path, Loader]], interval: float = MIN_INTERVAL,
                 history: Callable[[Path], LiveHistory | None] | None = None):
        self.lock = threading.RLock()
        self.interval = interval
        self.entries = [LiveEval(folder, load, history(folder) if history else None)
                        for folder, load in sources]
        self._checked = time.monotonic()
        seen: dict[str, Path] = {}
        for entry in self.entries:
            other = seen.setdefault(entry.loaded.slug, entry.folder)
            if other != entry.folder:
                raise SmevalsError(f"two Evals would share the URL '{entry.loaded.slug}': "
                                   f"{other} and {entry.folder}")

    def refresh(self) -> None:
        """Read again every Eval whose files changed (at most once per interval)."""
        with self.lock:
            now = time.monotonic()
            if now - self._checked < self.interval:
                return
            for entry in self.entries:
                entry.refresh()
            self._checked = time.monotonic()

    def evals(self) -> list[Loaded]:
        return [entry.loaded for entry in self.entries]

    def get(self, slug: str) -> Loaded | None:
        return next((e.loaded for e in self.entries if e.loaded.slug == slug), None)

    def history(self, slug: str) -> LiveHistory | None:
        return next((e.history for e in self.entries if e.loaded.slug == slug), None)

    def stamps(self) -> dict[str, dict[str, str | None]]:
        return {e.loaded.slug: {"stamp": e.stamp, "error": e.error} for e in self.entries}
