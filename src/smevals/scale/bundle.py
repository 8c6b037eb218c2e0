"""What workers need of an Eval, by content hash: the client lists the Eval's files and
ships each distinct content once per worker; a worker rebuilds the folder once in its
temporary directory and reuses it for every attempt and Grade."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

from smevals.run.plan import Runner

OUTSIDE = ".smevals-runner"      # where a runner program from outside the Eval is put


@dataclass(frozen=True)
class Bundle:
    digest: str                                 # identity of the whole folder
    files: tuple[tuple[str, int, str], ...]     # (path in the Eval, mode, sha256)
    runner: str | None                          # the runner program's path in the bundle


def make_bundle(eval_dir: Path, store_root: Path,
                runner: Runner | None) -> tuple[Bundle, dict[str, bytes]]:
    """The Eval's files (hidden ones at its top and the results store left out) and their
    contents by sha256; a runner program outside the Eval is added under OUTSIDE."""
    found: list[tuple[str, int, str]] = []
    blobs: dict[str, bytes] = {}
    skip = {os.path.abspath(store_root)}
    for path, rel in _walk(os.path.abspath(eval_dir), "", skip):
        _add(found, blobs, path, rel)
    where = None
    if runner is not None and runner.program is not None:
        program = os.path.abspath(runner.program)
        inside = os.path.relpath(program, os.path.abspath(eval_dir))
        if inside.startswith(".."):
            inside = f"{OUTSIDE}/{os.path.basename(program)}"
            _add(found, blobs, program, inside)
        where = inside
    found.sort()
    digest = hashlib.sha256(repr((found, where)).encode()).hexdigest()
    return Bundle(digest, tuple(found), where), blobs


def _walk(folder: str, prefix: str, skip: set[str]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    with os.scandir(folder) as it:
        for entry in sorted(it, key=lambda e: e.name):
            # hidden at the top (.git, .smevals, a venv ...); below, a Task's starting
            # files may hold dot files, which are part of its inputs
            if (entry.name.startswith(".") and not prefix) or entry.path in skip:
                continue
            if entry.is_dir():
                out.extend(_walk(entry.path, f"{prefix}{entry.name}/", skip))
            elif entry.is_file():
                out.append((entry.path, prefix + entry.name))
    return out


def _add(found: list[tuple[str, int, str]], blobs: dict[str, bytes], path: str,
         rel: str) -> None:
    data = Path(path).read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    blobs[sha] = data
    found.append((rel, os.stat(path).st_mode & 0o777, sha))


def materialize(bundle: Bundle, blobs: dict[str, bytes]) -> Path:
    """The bundle as a folder in this machine's temporary directory, built once (a
    complete folder is renamed into place, so a half-built one is never used)."""
    base = Path(tempfile.gettempdir()) / f"smevals-dask-{os.getuid()}"
    final = base / bundle.digest
    if final.is_dir():
        return final
    building = base / f".{bundle.digest}-{uuid.uuid4().hex[:8]}"
    building.mkdir(parents=True)
    for rel, mode, sha in bundle.files:
        target = building / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blobs[sha])
        target.chmod(mode)
    try:
        building.rename(final)
    except OSError:
        if not final.is_dir():
            raise
        shutil.rmtree(building, ignore_errors=True)
    return final
