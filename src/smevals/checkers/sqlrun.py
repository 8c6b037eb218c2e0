"""Running one statement of the SQL checkers on a private, read-only copy of the database,
under a time limit, a row limit, a memory limit and an authorizer that allows reading only.

The memory limit (SMEVALS_MAX_SQL_MB, 128 MB) bounds both what SQLite allocates (its hard
heap limit, which holds for the whole process, so for all the queries it runs at once; temp
tables and sorts are kept in that memory, never in files) and what the rows a query returns
take (read one at a time and counted: bytes of a blob, characters of text, 8 per number).
"""

from __future__ import annotations

import functools
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smevals.checkers.base import CheckInput, fail
from smevals.errors import SmevalsError

DEFAULT_TIMEOUT = 5.0
MAX_VALUE_BYTES = 16 * 1024 * 1024       # the longest string or blob a query may make
MAX_SQL_BYTES = 1024 * 1024
MEMORY_SETTING = "SMEVALS_MAX_SQL_MB"
MEMORY_MB = 128

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


def check_timeout(inp: CheckInput) -> float:
    value = inp.timeout
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return DEFAULT_TIMEOUT


def open_readonly(path: Path) -> tuple[sqlite3.Connection, list[str]]:
    """A read-only connection that refuses all but reading; the list collects refusals."""
    limit = memory_limit()
    uri = "file:" + _uri_path(path) + "?mode=ro"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA query_only = 1")
    conn.execute("PRAGMA trusted_schema = 0")
    conn.execute("PRAGMA temp_store = MEMORY")      # within the heap limit, never on disk
    _limit_heap(conn, limit)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    refused: list[str] = []
    conn.set_authorizer(_authorizer(refused))
    return conn, refused


def memory_limit() -> int:
    """Bytes a query may take (SQLite's heap, and the rows it returns): SMEVALS_MAX_SQL_MB
    megabytes, 128 unless set; a malformed value fails the Check, saying so."""
    from smevals.files.regular import megabytes

    try:
        return megabytes(MEMORY_SETTING, MEMORY_MB)
    except SmevalsError as exc:
        fail(str(exc))


_HEAP: list[int] = []           # the hard heap limit set in this process
_HEAP_LOCK = threading.Lock()


def _limit_heap(conn: sqlite3.Connection, limit: int) -> None:
    """SQLite's hard heap limit for the process (soft: half of it, so that caches give way
    first). It can only be lowered once set: a lower setting later lowers it."""
    with _HEAP_LOCK:
        if _HEAP and _HEAP[0] <= limit:
            return
        conn.execute(f"PRAGMA hard_heap_limit = {int(limit)}")
        conn.execute(f"PRAGMA soft_heap_limit = {int(limit) // 2}")
        _HEAP[:] = [int(conn.execute("PRAGMA hard_heap_limit").fetchone()[0])]


def _megabytes(limit: int) -> str:
    return f"{limit / (1 << 20):g} MB"


def _uri_path(path: Path) -> str:
    from urllib.parse import quote

    return quote(str(path.resolve()), safe="/")


def _authorizer(refused: list[str]) -> Callable[..., int]:
    def decide(action: int, arg1: str | None, arg2: str | None, *_rest: object) -> int:
        if action == sqlite3.SQLITE_READ and _refused_pragma_table(arg1):
            refused.append(f"PRAGMA {(arg1 or '')[7:].lower()} is not allowed (only "
                           "schema-reading pragmas)")
            return sqlite3.SQLITE_DENY
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
        elif action == sqlite3.SQLITE_UPDATE and (arg1 or "").lower() in _SCHEMA_TABLES:
            # Asked when a pragma is read as a table (`SELECT * FROM pragma_table_info('t')`),
            # never to write: a schema change is refused by its own action first (CREATE,
            # DROP, ALTER) and the connection is read-only. Ignored (nothing is written), so
            # the pragma itself is judged next, for what it is.
            return sqlite3.SQLITE_IGNORE
        elif (arg1 or "").lower() in _SCHEMA_TABLES:
            refused.append("changing the schema (CREATE, DROP, ALTER) is not allowed: the "
                           "database is read-only")
        else:
            what = _ACTION_NAMES[action] if 0 <= action < len(_ACTION_NAMES) else str(action)
            refused.append(f"{what} is not allowed: the database is read-only")
        return sqlite3.SQLITE_DENY

    return decide


def _refused_pragma_table(table: str | None) -> bool:
    """Whether `table` is a pragma read as a table (`pragma_database_list`) other than the
    schema-reading ones: refused when the statement is compiled (SQLite itself asks about
    the pragma only when it runs), so `sql_valid` refuses it too."""
    name = (table or "").lower()
    return name.startswith("pragma_") and name[7:] in _pragma_names() \
        and name[7:] not in _READ_PRAGMAS


@functools.cache
def _pragma_names() -> frozenset[str]:
    conn = sqlite3.connect(":memory:")
    try:
        return frozenset(str(r[0]).lower() for r in conn.execute("PRAGMA pragma_list"))
    finally:
        conn.close()


def run_query(conn: sqlite3.Connection, refused: list[str], sql: str, timeout: float,
              max_rows: int) -> Result:
    """Run one statement; QueryError with SQLite's (or the authorizer's, or a limit's)
    reason. Rows are read one at a time, each counted against the memory limit."""
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
        rows = _read_rows(cursor, deadline, timeout, max_rows)
    except sqlite3.Warning as exc:          # Python's "one statement at a time"
        raise QueryError(_one_statement(exc)) from None
    except sqlite3.Error as exc:
        raise QueryError(_reason(exc, refused, stopped, timeout)) from None
    except ValueError as exc:              # a NUL character, a lone surrogate
        raise QueryError(f"the SQL cannot be passed to SQLite: {exc}") from None
    except MemoryError:                    # SQLite's hard heap limit
        raise QueryError(_heap_reason()) from None
    finally:
        conn.set_progress_handler(None, 0)
    return Result([str(d[0]) for d in cursor.description], rows)


def _read_rows(cursor: sqlite3.Cursor, deadline: float, timeout: float, max_rows: int
               ) -> list[tuple[Any, ...]]:
    limit, taken = memory_limit(), 0
    rows: list[tuple[Any, ...]] = []
    for row in cursor:
        if len(rows) == max_rows:
            raise QueryError(f"the query returns more than {max_rows} rows (max_rows)")
        for value in row:
            taken += len(value) if value.__class__ is str or value.__class__ is bytes else 8
        if taken > limit:
            raise QueryError(f"the rows the query returns take more than {_megabytes(limit)} "
                             f"({MEMORY_SETTING} raises it)")
        if time.monotonic() > deadline:
            raise QueryError(f"the query ran longer than {timeout:g} s (stopped)")
        rows.append(row)
    return rows


def _heap_reason() -> str:
    limit = _HEAP[0] if _HEAP else memory_limit()
    return (f"the query needs more than {_megabytes(limit)} of memory (SQLite's heap limit; "
            f"{MEMORY_SETTING} raises it)")


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
    except MemoryError:
        raise QueryError(_heap_reason()) from None
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
