"""Find the program a `runner:` or `checker:` names, as the original smevals does."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


class ProgramError(Exception):
    """The program cannot be found or run; the message says why."""


def resolve_program(spec: str, base: Path) -> Path:
    """A path relative to `base` wins; a bare name falls back to PATH; must be executable."""
    spec = spec.strip()
    if not spec:
        raise ProgramError("program must be a non-empty string")
    local = (base / spec).absolute()
    if local.exists():
        return _executable(local)
    if os.path.isabs(spec) or "/" in spec or "\\" in spec:
        raise ProgramError(f"{local} is not a file")
    found = shutil.which(spec)
    if found is None:
        raise ProgramError(f"'{spec}' was not found on PATH")
    return _executable(Path(found).absolute())


def _executable(path: Path) -> Path:
    if not path.is_file():
        raise ProgramError(f"{path} is not a file")
    if not os.access(path, os.X_OK):
        raise ProgramError(f"{path} is not executable (chmod +x {path.name})")
    return path
