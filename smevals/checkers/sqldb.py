"""The SQLite side of the SQL checkers: find the Eval's database, build a `.sql` script once,
and run one statement on a private, read-only copy under a time limit, a row limit and an
authorizer that allows reading only.

A `.sql` script is built into `<cache dir>/sql/<sha256 of the script>.sqlite` (the cache dir
of smevals.store.cache: platformdirs' user cache dir, or SMEVALS_CACHE_DIR) and reused by
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
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smevals.checkers.base import CheckInput, fail

SQLITE_MAGIC = b"SQLite format 3\x00"
MAX_SCRIPT_BYTES = 64 * 1024 * 1024
DEFAULT_TIMEOUT = 5.0
MAX_VALUE_BYTES = 16 * 1024 * 1024       # the longest string or blob a query may make
MAX_SQL_BYTES = 1024 * 1024

_SQLITE_RECURSIVE = getattr(sqlite3, "SQLITE_RECURSIVE", 33)
_ALLOWED = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, _SQLITE_RECURSIVE})
# Pragmas that only describe the schema; any other pragma, and any pragma with a value
# (`PRAGMA x = 1`), is refused.
_READ_PRAGMAS = frozenset({"table_info", "table_xinfo", "index_list", "index_info",
                           "index_xinfo", "foreign_key_list", "table_list", "collation_list",
                           "function_list"})
# Functions that reach files or extensions in some SQLite builds (the sqlite3 shell's
# readfile/writefile/edit, fileio's lsdir, fts3_tokenizer's pointer trick).
_REFUSED_FUNCTIONS = frozenset({"load_extension", "readfile", "writefile", "edit", "lsdir",
                                "fts3_tokenizer", "zipfile", "sqlar_compress",
                                "sqlar_uncompress"})
# SQLite's authorizer action codes (sqlite3.h), by number: the name says what was refused.
_ACTION_NAMES = (
    "COPY", "CREATE INDEX", "CREATE TABLE", "CREATE TEMP INDEX", "CREATE TEMP TABLE",
    "CREATE TEMP TRIGGER", "CREATE TEMP VIEW", "CREATE TRIGGER", "CREATE VIEW", "DELETE",
    "DROP INDEX", "DROP TABLE", "DROP TEMP INDEX", "DROP TEMP TABLE", "DROP TEMP TRIGGER",
    "DROP TEMP VIEW", "DROP TRIGGER", "DROP VIEW", "INSERT", "PRAGMA", "READ", "SELECT",
    "TRANSACTION", "UPDATE", "ATTACH", "DETACH", "ALTER TABLE", "REINDEX", "ANALYZE",
    "CREATE VTABLE", "DROP VTABLE", "FUNCTION", "SAVEPOINT", "RECURSIVE")
_SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_temp_master", "sqlite_schema",
                            "sqlite_temp_schema"})


class QueryError(Exception):
    """The statement was refused or failed: the reason, as SQLite or the authorizer gave it."""


@dataclass
class Result:
    columns: list[str]
    rows: list[tuple[Any, ...]]


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
    from smevals.store import cache

    return cache.cache_dir() / "sql" if cache.enabled() else None


_COPIES: dict[tuple[str, int, int], Path] = {}
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


def _build_authorizer(action: int, *_args: Any) -> int:
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


# ---- running one statement --------------------------------------------------------------


def check_timeout(inp: CheckInput) -> float:
    value = inp.timeout
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return DEFAULT_TIMEOUT


def open_readonly(path: Path) -> tuple[sqlite3.Connection, list[str]]:
    """A read-only connection that refuses all but reading; the list collects refusals."""
    uri = "file:" + _uri_path(path) + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA query_only = 1")
    conn.execute("PRAGMA trusted_schema = 0")
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    refused: list[str] = []
    conn.set_authorizer(_authorizer(refused))
    return conn, refused


def _uri_path(path: Path) -> str:
    from urllib.parse import quote

    return quote(str(path.resolve()), safe="/")


def _authorizer(refused: list[str]) -> Callable[..., int]:
    def decide(action: int, arg1: str | None, arg2: str | None, *_rest: Any) -> int:
        if action in _ALLOWED:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION:
            if (arg2 or "").lower() not in _REFUSED_FUNCTIONS:
                return sqlite3.SQLITE_OK
            refused.append(f"the function {arg2}() is not allowed")
        elif action == sqlite3.SQLITE_PRAGMA:
            if (arg1 or "").lower() in _READ_PRAGMAS:
                return sqlite3.SQLITE_OK
            refused.append(f"PRAGMA {arg1} is not allowed (only schema-reading pragmas)")
        elif (arg1 or "").lower() in _SCHEMA_TABLES:
            refused.append("changing the schema (CREATE, DROP, ALTER) is not allowed: the "
                           "database is read-only")
        else:
            what = _ACTION_NAMES[action] if 0 <= action < len(_ACTION_NAMES) else str(action)
            refused.append(f"{what} is not allowed: the database is read-only")
        return sqlite3.SQLITE_DENY

    return decide


def run_query(conn: sqlite3.Connection, refused: list[str], sql: str, timeout: float,
              max_rows: int) -> Result:
    """Run one statement; QueryError with SQLite's (or the authorizer's) reason."""
    deadline = time.monotonic() + timeout
    stopped: list[bool] = []

    def progress() -> int:
        if time.monotonic() > deadline:
            stopped.append(True)
            return 1
        return 0

    conn.set_progress_handler(progress, 2000)
    try:
        cursor = conn.execute(sql)
        if cursor.description is None:
            raise QueryError("the statement returns no rows (not a query)")
        rows = cursor.fetchmany(max_rows + 1)
    except sqlite3.Warning as exc:          # Python's "one statement at a time"
        raise QueryError(_one_statement(exc)) from None
    except sqlite3.Error as exc:
        raise QueryError(_reason(exc, refused, stopped, timeout)) from None
    except ValueError as exc:              # a NUL character, a lone surrogate
        raise QueryError(f"the SQL cannot be passed to SQLite: {exc}") from None
    finally:
        conn.set_progress_handler(None, 0)
    if len(rows) > max_rows:
        raise QueryError(f"the query returns more than {max_rows} rows (max_rows)")
    return Result([str(d[0]) for d in cursor.description], rows)


def explain(conn: sqlite3.Connection, refused: list[str], sql: str, timeout: float) -> None:
    """Compile `sql` against the schema without running it (EXPLAIN); QueryError if it
    cannot be."""
    deadline = time.monotonic() + timeout
    conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 2000)
    try:
        conn.execute("EXPLAIN " + sql).fetchmany(1)
    except sqlite3.Warning as exc:
        raise QueryError(_one_statement(exc)) from None
    except sqlite3.Error as exc:
        raise QueryError(_reason(exc, refused, [], timeout)) from None
    except ValueError as exc:
        raise QueryError(f"the SQL cannot be passed to SQLite: {exc}") from None
    finally:
        conn.set_progress_handler(None, 0)


def _one_statement(exc: Exception) -> str:
    if "one statement" in str(exc):
        return "only one SQL statement is allowed"
    return str(exc)


def _reason(exc: sqlite3.Error, refused: list[str], stopped: list[bool], timeout: float
            ) -> str:
    if refused:
        return f"refused: {refused[0]}"
    if stopped:
        return f"the query ran longer than {timeout:g} s (stopped)"
    text = str(exc)
    if "one statement" in text:
        return "only one SQL statement is allowed"
    return f"SQLite: {text}" if text else f"SQLite: {type(exc).__name__}"
