"""sql_execution and sql_valid: text-to-SQL graded by what the query returns.

sql_execution runs the model's SQL and a reference (a query, or `expected_rows`) on a private
read-only copy of the Eval's SQLite database and compares the results as Spider's execution
accuracy does (or BIRD's, with `mode: bird`); sql_valid only compiles the SQL against the
schema (EXPLAIN). The database side is in sqldb.py (finding it, building a `.sql` script)
and sqlrun.py (the read-only connection, the limits); the comparison in sqlcompare.py and
sqlmatch.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals.checkers.base import (
    BOOL,
    CEILING,
    NONEMPTY,
    Checker,
    CheckInput,
    CheckResult,
    binary,
    checker,
    fail,
    one_of_words,
)
from smevals.checkers.inputs import input_text
from smevals.checkers.sqlcompare import extract_sql, has_top_level_order_by, strip_sql
from smevals.checkers.sqldb import database_path, private_copy
from smevals.checkers.sqlmatch import ANY_ORDER, BIRD, SPIDER, STRICT, Rules, mismatch
from smevals.checkers.sqlrun import (
    QueryError,
    Result,
    check_timeout,
    explain,
    open_readonly,
    run_query,
)

if TYPE_CHECKING:
    import sqlite3

CHECKERS: dict[str, Checker] = {}

DEFAULT_MAX_ROWS = 10_000
DEFAULT_TOLERANCE = 1e-9

_SCALAR = {"type": ["string", "number", "boolean", "null"]}
ROWS_OPTION = {
    "type": "array",
    "items": {"anyOf": [{"type": "array", "items": _SCALAR}, {"type": "object",
                                                              "additionalProperties": _SCALAR},
                        _SCALAR]},
    "x-expect": "a list of rows (each a list of values, a mapping of column to value, or one "
                "value)",
}
DATABASE_OPTION = {**NONEMPTY, "x-expect": "a path to an SQLite database or a .sql script, "
                                          "relative to the grader's folder"}


def _problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    if opts.get("mode") == BIRD and opts.get("ordered") is True:
        return [("ordered", "mode: bird compares the rows as sets, so their order cannot "
                            "count (drop `ordered`, or use mode: spider)")]
    return _rows_problems(opts)


def _rows_problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    rows = opts.get("expected_rows")
    if not isinstance(rows, list) or not rows:
        return []
    kinds = {"list" if isinstance(r, list) else "dict" if isinstance(r, dict) else "value"
             for r in rows}
    if len(kinds) > 1:
        return [("expected_rows", "give every row in the same form (all lists, all mappings "
                                  "or all single values)")]
    widths = {len(_shape(r)) for r in rows}
    if len(widths) > 1:
        return [("expected_rows", "every row must have the same number of values")]
    if isinstance(rows[0], dict) and len({tuple(r) for r in rows}) > 1:
        return [("expected_rows", "every row mapping must name the same columns, in the same "
                                  "order")]
    return []


def _shape(row: object) -> list[Any] | dict[str, Any]:
    return row if isinstance(row, list | dict) else [row]


@checker(
    CHECKERS,
    "sql_execution",
    "Run the SQL (the output, its first ```sql block, or file:) and a reference on the Eval's "
    "SQLite database; pass when the results match as Spider's evaluation compares them "
    "(columns in any order; BIRD's sets with mode: bird).",
    properties={
        "database": DATABASE_OPTION,
        "reference": {**NONEMPTY, "x-expect": "a non-empty SQL query"},
        "expected_rows": ROWS_OPTION,
        "ordered": BOOL,
        "float_tolerance": CEILING,
        "match_columns": BOOL,
        "mode": one_of_words(SPIDER, BIRD),
        "columns": one_of_words(ANY_ORDER, STRICT),
        "max_rows": {"type": "integer", "minimum": 1, "x-expect": "a positive integer"},
    },
    required=("database", ("reference", "expected_rows")),
    task_keys={"database": ("database",), "reference": ("reference",),
               "expected_rows": ("expected_rows",)},
    problems=_problems,
)
def sql_execution(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    sql, path = _sql_and_database(opts, inp)
    timeout, max_rows = check_timeout(inp), opts.get("max_rows", DEFAULT_MAX_ROWS)
    conn, refused = open_readonly(private_copy(path))
    try:
        want, ordered = _expected(opts, conn, refused, timeout, max_rows)
        try:
            got = run_query(conn, refused, sql, timeout, max_rows)
        except QueryError as exc:
            return binary(False, f"the query failed: {exc}", sql=_clip(sql))
    finally:
        conn.close()
    return _compare(opts, got, want, ordered)


def _expected(opts: dict[str, Any], conn: sqlite3.Connection, refused: list[str], timeout: float,
              max_rows: int) -> tuple[Result, bool]:
    """The expected result and whether order matters."""
    if "expected_rows" in opts:
        return _table(opts["expected_rows"]), bool(opts.get("ordered", False))
    reference = strip_sql(opts["reference"])
    refused.clear()
    try:
        want = run_query(conn, refused, reference, timeout, max_rows)
    except QueryError as exc:
        fail(f"the reference query failed: {exc}")
    refused.clear()
    ordered = opts.get("ordered")
    return want, has_top_level_order_by(reference) if ordered is None else bool(ordered)


def _table(rows: list[Any]) -> Result:
    if rows and isinstance(rows[0], dict):
        return Result(list(rows[0]), [tuple(_value(v) for v in r.values()) for r in rows])
    return Result([], [tuple(_value(v) for v in _shape(r)) for r in rows])


def _value(value: object) -> object:
    return int(value) if isinstance(value, bool) else value


def _compare(opts: dict[str, Any], got: Result, want: Result, ordered: bool) -> CheckResult:
    mode = opts.get("mode", SPIDER)
    names = bool(opts.get("match_columns"))
    if names and _names(got.columns) != _names(want.columns):
        return binary(False, "the column names differ (match_columns)",
                      columns=got.columns, expected_columns=want.columns)
    columns = STRICT if names else opts.get("columns", STRICT if mode == BIRD else ANY_ORDER)
    rules = Rules(mode, columns, ordered and mode != BIRD,
                  opts.get("float_tolerance", DEFAULT_TOLERANCE))
    want_width = len(want.columns) if want.columns else len(want.rows[0]) if want.rows else None
    found = mismatch(got.rows, want.rows, (len(got.columns), want_width), rules)
    if found is None:
        return CheckResult(ok=True, score=1.0)
    notes, details = found
    if not details:
        details = {"columns": got.columns, "expected_columns": want.columns}
    return binary(False, notes, **details)


def _names(columns: list[str]) -> list[str]:
    return [c.lower() for c in columns]


def _clip(sql: str, limit: int = 500) -> str:
    return sql if len(sql) <= limit else sql[:limit] + "…"


@checker(
    CHECKERS,
    "sql_valid",
    "The SQL (the output, its first ```sql block, or file:) compiles against the Eval's "
    "database schema (EXPLAIN), without running it.",
    properties={"database": DATABASE_OPTION},
    required=("database",),
    task_keys={"database": ("database",)},
)
def sql_valid(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    sql, path = _sql_and_database(opts, inp)
    conn, refused = open_readonly(private_copy(path))
    try:
        explain(conn, refused, sql, check_timeout(inp))
    except QueryError as exc:
        return binary(False, f"invalid SQL: {exc}", sql=_clip(sql))
    finally:
        conn.close()
    return CheckResult(ok=True, score=1.0)


def _sql_and_database(opts: dict[str, Any], inp: CheckInput) -> tuple[str, Path]:
    """The model's SQL (a fail with score 0 when there is none) and the database to run it on."""
    label, text = input_text(opts, inp)
    sql = extract_sql(text)
    if not sql:
        fail(f"no SQL found in {label}", score=0.0)
    return sql, database_path(opts, inp)
