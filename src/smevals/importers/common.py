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


def write_eval(target: Path, files: dict[str, str]) -> None:
    """Write the files (path relative to the Eval -> text) as a new Eval at `target`."""
    with staged_folder(target) as staging:
        for rel, text in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
