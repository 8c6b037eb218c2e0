"""The database side of the SQL checkers: find the Eval's database, build a `.sql` script once,
and make each process its private copy to query (running a statement is in sqlrun.py).

A `.sql` script is built into `<cache dir>/sql/<sha256 of the script>.sqlite` (the cache dir
of smevals.files.cachefile: platformdirs' user cache dir, or SMEVALS_CACHE_DIR) and reused by
every later Check; with SMEVALS_NO_CACHE=1, or a cache dir that cannot be written, it is
built into the process's private folder instead. Any other file must be an SQLite database.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path
from typing import Any

from smevals import caches
from smevals.checkers.base import CheckInput, fail

SQLITE_MAGIC = b"SQLite format 3\x00"
MAX_SCRIPT_BYTES = 64 * 1024 * 1024


# ---- finding and building the database -------------------------------------------------


def database_path(opts: dict[str, Any], inp: CheckInput) -> Path:
    """The `database` option as a path: relative to the grader's folder (the current folder
    without a grader, as in smevals.check)."""
    name = opts["database"]
    if "\0" in name:
        fail("option 'database': the path contains a NUL character")
    path = Path(name)
    if not path.is_absolute() and inp.grader_dir is not None:
        path = Path(inp.grader_dir) / path
    if not path.is_file():
        where = "the grader's folder" if inp.grader_dir is not None else "the current folder"
        fail(f"option 'database': no such file: {name} (relative to {where})")
    return path


def script_cache_dir() -> Path | None:
    """Where built `.sql` scripts are kept, or None when the cache is off."""
    from smevals.files import cachefile

    return cachefile.cache_dir() / "sql" if cachefile.enabled() else None


_COPIES: dict[tuple[str, int, int], Path] = {}
caches.register(__name__, "_COPIES")
_COPY_LOCK = threading.Lock()
_FOLDER: list[Path] = []


def private_copy(source: Path) -> Path:
    """This process's private copy of the database (a `.sql` script built first), made once
    per file content seen (path, size, mtime) in a temporary folder removed at exit. Queries
    never open the Eval's file, nor the cache's built one."""
    stat = source.stat()
    key = (os.path.realpath(source), stat.st_size, stat.st_mtime_ns)
    with _COPY_LOCK:
        found = _COPIES.get(key)
        if found is not None and found.is_file():
            return found
        target = _process_folder() / f"db-{len(_COPIES)}.sqlite"
        if source.suffix.lower() == ".sql":
            _build_or_copy(source, target)
        else:
            _copy_database(source, target)
        _COPIES[key] = target
        return target


def _process_folder() -> Path:
    if not _FOLDER or not _FOLDER[0].is_dir():
        folder = Path(tempfile.mkdtemp(prefix="smevals-sql-"))
        atexit.register(shutil.rmtree, folder, True)
        _FOLDER[:] = [folder]
    return _FOLDER[0]


def _copy_database(source: Path, target: Path) -> None:
    with open(source, "rb") as handle:
        if handle.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
            fail(f"option 'database': {source.name} is not an SQLite database "
                 f"(give an SQLite file, or a .sql script)")
    shutil.copyfile(source, target)


def _build_or_copy(script: Path, target: Path) -> None:
    data = script.read_bytes()[: MAX_SCRIPT_BYTES + 1]
    if len(data) > MAX_SCRIPT_BYTES:
        fail(f"option 'database': {script.name} is larger than "
             f"{MAX_SCRIPT_BYTES // (1024 * 1024)} MiB")
    folder = script_cache_dir()
    if folder is not None:
        built = folder / f"{hashlib.sha256(data).hexdigest()}.sqlite"
        if not built.is_file():
            with contextlib.suppress(OSError):
                folder.mkdir(parents=True, exist_ok=True)
                _build_atomically(script.name, data, built)
        if built.is_file():
            shutil.copyfile(built, target)
            return
    build_script(script.name, data, target)


def _build_atomically(name: str, data: bytes, built: Path) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".building-", suffix=".sqlite", dir=built.parent)
    os.close(fd)
    try:
        build_script(name, data, Path(tmp))
        os.replace(tmp, built)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def build_script(name: str, data: bytes, target: Path) -> None:
    """Run the script `data` into a new database at `target`; a failure fails the Check."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        fail(f"option 'database': {name} is not UTF-8 text")
    with contextlib.suppress(OSError):
        target.unlink()
    conn = sqlite3.connect(target, isolation_level=None)
    try:
        conn.set_authorizer(_build_authorizer)
        conn.executescript(text)
    except sqlite3.Error as exc:
        fail(f"option 'database': the script {name} failed to build: {exc}")
    finally:
        conn.close()


def _build_authorizer(action: int, *_args: object) -> int:
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK
