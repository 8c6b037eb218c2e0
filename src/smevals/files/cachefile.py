"""Cache files kept outside the repository: the folder (platformdirs' user cache dir;
`SMEVALS_CACHE_DIR` overrides it, `SMEVALS_NO_CACHE=1` turns every cache off) and a value
written there in marshal form (fast to decode, and unlike pickle it cannot run code),
atomically, and read back. Every file written so is only a cache: deleting it at any time
only costs time. The store's record index (store/cache.py), the Eval definitions
(evaldef/defcache.py), `log`'s points (history/) and the SQL databases (checkers/sqldb.py)
keep theirs here.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import mmap
import os
import tempfile
from pathlib import Path
from typing import Any


def enabled() -> bool:
    return os.environ.get("SMEVALS_NO_CACHE") != "1"


def cache_dir() -> Path:
    override = os.environ.get("SMEVALS_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("smevals"))


def folder_key(folder: Path | str) -> str:
    """A short name for a folder's cache files: a hash of its real path."""
    real = os.path.realpath(folder).encode("utf-8", "surrogateescape")
    return hashlib.sha256(real).hexdigest()[:20]




def read_marshal(path: str) -> Any:
    """What `write_marshal` wrote to `path`, or None when it is absent or unreadable."""
    try:
        with open(path, "rb") as handle, \
                mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as view:
            return marshal.loads(view)         # straight from the page cache, no copy
    except (OSError, EOFError, ValueError, TypeError):
        return None


def write_marshal(path: str, value: Any) -> None:
    """Write `value` in marshal form atomically (a temporary file renamed into place); a
    failure to write is ignored: every file written so is only a cache."""
    tmp = ""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".cache-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(marshal.dumps(value))
        os.replace(tmp, path)
        tmp = ""
    except (OSError, ValueError):
        return
    finally:
        if tmp:
            discard(tmp)


def discard(path: str) -> None:
    """Delete the file `path` if it can be; a cache file that stays only costs room."""
    with contextlib.suppress(OSError):
        os.unlink(path)
