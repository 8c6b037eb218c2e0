"""A disposable index of records, kept outside the repository (platformdirs' user cache).

Never stale: a folder whose mtime changed is listed again, and a record whose mtime or size
changed is read again. Deleting the cache only costs time.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any

CACHE_VERSION = 2


def cache_dir() -> Path:
    override = os.environ.get("SMEVALS_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("smevals"))


def cache_path(root: Path) -> Path:
    key = hashlib.sha256(str(root.absolute()).encode()).hexdigest()[:20]
    return cache_dir() / f"index-{key}.pickle"


def load(root: Path) -> dict[str, Any]:
    """The cached index for `root`, or an empty one when absent, old or unreadable."""
    if os.environ.get("SMEVALS_NO_CACHE") == "1":
        return {}
    try:
        with open(cache_path(root), "rb") as handle:
            gc.disable()
            try:
                data = pickle.load(handle)
            finally:
                gc.enable()
    except (OSError, pickle.PickleError, EOFError, ValueError, AttributeError, ImportError):
        return {}
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
        return {}
    return data


def save(root: Path, data: dict[str, Any]) -> None:
    """Write the index atomically; a failure to write is silently ignored (it is a cache)."""
    if os.environ.get("SMEVALS_NO_CACHE") == "1":
        return
    target = cache_path(root)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".index-")
        with os.fdopen(fd, "wb") as handle:
            pickle.dump({**data, "version": CACHE_VERSION}, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, target)
    except OSError:
        return
