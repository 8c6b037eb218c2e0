"""Find the program a `runner:` or `checker:` names, as the original smevals does.

An Eval read at a git revision (`diff`, `report --rev`) is extracted into a mirror of the
repository (see `smevals.evaldef.committed`). A path to a file inside the repository (relative,
absolute, or found on PATH) resolves inside that mirror, so a revision never reaches the
working tree's or another revision's files. A file outside the repository is not in git:
every revision uses it as it is now.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from smevals import scope


class ProgramError(Exception):
    """The program cannot be found or run; the message says why."""




def confine(mirror: Path, repo: Path) -> None:
    """Resolve every path below `mirror` as at that revision of `repo` (see the module)."""
    command = scope.current()
    with command.lock:
        command.mirrors[Path(os.path.abspath(mirror))] = Path(os.path.realpath(repo))


def _inside(path: str, root: Path | str) -> bool:
    return path == str(root) or path.startswith(str(root) + os.sep)


def _mirror_of(base: Path) -> tuple[Path, Path] | None:
    where = os.path.abspath(base)
    command = scope.current()
    with command.lock:
        known = list(command.mirrors.items())
    for mirror, repo in known:
        if _inside(where, mirror):
            return mirror, repo
    return None


def at_revision(path: Path, base: Path) -> Path:
    """`path` (absolute, or relative to `base`) as seen from `base`. Below a revision's
    mirror, a path inside the repository is mapped into the mirror (the working tree's copy
    is never used) and a path outside the repository (not versioned by git) is used as it
    is now; elsewhere it is unchanged."""
    found = _mirror_of(base)
    if found is None:
        return (base / path).absolute()
    mirror, repo = found
    full = Path(os.path.normpath(base / path))
    if not os.path.isabs(path):
        if _inside(str(full), mirror):
            return _checked(full, mirror)
        full = Path(os.path.normpath(repo / os.path.relpath(full, mirror)))
    real = os.path.realpath(full)
    if _inside(real, repo):          # the working tree's copy: read the revision's instead
        return _checked(mirror / os.path.relpath(real, repo), mirror)
    return full                      # outside the repository: not versioned by git


def _checked(path: Path, mirror: Path) -> Path:
    """Refuse a path that a committed symbolic link leads out of the mirror."""
    if path.exists() and not _inside(os.path.realpath(path), os.path.realpath(mirror)):
        raise ProgramError(f"{path} leads outside the repository at this revision")
    return path


def resolve_program(spec: str, base: Path) -> Path:
    """A path relative to `base` wins; a bare name falls back to PATH; must be executable."""
    spec = spec.strip()
    if not spec:
        raise ProgramError("program must be a non-empty string")
    local = at_revision(Path(spec), base)
    if local.exists():
        return _executable(local)
    if os.path.isabs(spec) or "/" in spec or "\\" in spec:
        raise ProgramError(f"{local} is not a file")
    found = shutil.which(spec)
    if found is None:
        raise ProgramError(f"'{spec}' was not found on PATH")
    return _executable(at_revision(Path(found).absolute(), base))


def _executable(path: Path) -> Path:
    if not path.is_file():
        raise ProgramError(f"{path} is not a file")
    if not os.access(path, os.X_OK):
        raise ProgramError(f"{path} is not executable (chmod +x {path.name})")
    return path
