"""What every importer shares: the target folder must be new or empty, and is written
whole or not at all."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from smevals.errors import SmevalsError


def new_eval_folder(target: Path, hint: str = "") -> None:
    """An importer's target must be missing or an empty folder (exit 2 otherwise)."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise SmevalsError(f"{target} already exists and is not empty; choose another "
                           f"folder{hint}")


@contextmanager
def staged_folder(target: Path) -> Iterator[Path]:
    """A temporary sibling of `target` to write a new Eval into; moved into place when the
    block ends, removed when it raises (an import never leaves half an Eval)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        yield staging
        if target.exists():
            target.rmdir()
        os.replace(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
