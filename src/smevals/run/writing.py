"""Writing to a store that the disk refuses: an environment problem (exit 2), not a bug."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.evaldef.load import display_path

# OS reasons that say the store cannot take more: an environment problem (exit 2), not a bug
_FULL_OR_READ_ONLY = {"ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EFBIG", "EIO"}


@contextmanager
def writing_to(root: Path) -> Iterator[None]:
    """Turn a write that the disk refuses (full, read-only, over a quota or size limit) into
    `cannot write to <store>/: <reason>` (exit 2). What was being staged is thrown away by
    the writer itself, so no partial object is left and the next run tops up."""
    from smevals.files.durable import sync_pending

    try:
        yield
        sync_pending()              # what the command wrote is on disk when it ends
    except OSError as exc:
        import errno

        if errno.errorcode.get(exc.errno or 0) not in _FULL_OR_READ_ONLY:
            raise
        where = display_path(root)
        inside = exc.filename is None or os.path.abspath(str(exc.filename)).startswith(
            os.path.abspath(root))
        target = f"{where}/" if inside else str(exc.filename)
        raise SmevalsError(f"cannot write to {target}: {exc.strerror or exc}") from None
