"""The three tables (runs, checks, history) as columns of plain Python values, each column
with one type. DataFrames, Parquet, CSV and JSON lines are all made from these
(`frames.py`, `files.py`), so every format has the same columns and values.

The columns are documented in docs/analysis.md ("Columns"); `COLUMNS` is the one list a
test compares with that table.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import orjson

from smevals.analysis.results import CHECK_FIELDS, RUN_FIELDS, CheckResult, RunResult
from smevals.history.doc import HistoryDoc

STR, INT, FLOAT, BOOL, TIME = "str", "int", "float", "bool", "time"
INT64 = 2**63
AS_INT = {True: 1, False: 0}     # passed: 1, 0, or None
TASK_PREFIX = "task."
METRIC_PREFIX = "metric."


@dataclass(frozen=True)
class Table:
    """Named columns of equal length, each with its type (STR, INT, FLOAT, BOOL, TIME: an
    ISO-8601 text that the typed formats make a UTC timestamp)."""

    name: str
    columns: dict[str, Sequence[Any]]
    types: dict[str, str]

    @property
    def rows(self) -> int:
        return len(next(iter(self.columns.values()), ()))


# --- runs --------------------------------------------------------------------------------

RUN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("eval", STR), ("task", STR), ("config", STR), ("model", STR), ("sample", INT),
    ("run_id", STR), ("run_rel", STR), ("grade_id", STR), ("grade_rel", STR),
    ("status", STR), ("failure", STR), ("started", TIME), ("ended", TIME),
    ("duration_seconds", FLOAT), ("counted", BOOL), ("left_out", STR), ("stale", BOOL),
    ("outcome", STR), ("passed", INT), ("score", FLOAT), ("grader", STR),
    ("grader_version", STR), ("graded", TIME), ("tags", STR), ("input_tokens", INT),
    ("output_tokens", INT), ("total_tokens", INT), ("cost_usd", FLOAT), ("latency_ms", FLOAT),
    ("judge_calls", FLOAT), ("judge_cached", FLOAT), ("judge_input_tokens", FLOAT),
    ("judge_output_tokens", FLOAT), ("judge_cost_usd", FLOAT), ("commit", STR),
    ("run_commit", STR), ("store", STR),
)


def runs_table(results: Iterable[RunResult]) -> Table:
    """One row per Run: RUN_COLUMNS, then `metric.KEY` for each key of the Grades' metrics
    and `task.KEY` for each key of the Task documents (but `name`), in name order."""
    with no_gc():
        rows = list(results)
        wanted = [name for name, _kind in RUN_COLUMNS] + ["metrics", "task_keys"]
        by_field = fields_of(rows, RUN_FIELDS, wanted)
    columns: dict[str, Sequence[Any]] = {name: by_field[name] for name, _kind in RUN_COLUMNS}
    columns["passed"] = list(map(AS_INT.get, by_field["passed"]))
    columns["tags"] = list(map(" ".join, by_field["tags"]))
    types = dict(RUN_COLUMNS)
    for prefix, maps in ((METRIC_PREFIX, by_field["metrics"]),
                         (TASK_PREFIX, by_field["task_keys"])):
        for key in _keys(maps, skip="name" if prefix == TASK_PREFIX else None):
            kind, values = typed([m.get(key) for m in maps])
            columns[prefix + key] = values
            types[prefix + key] = kind
    return Table("runs", columns, types)


@contextmanager
def no_gc() -> Iterator[None]:
    """The cyclic GC off while many records and lists are made: it would walk them again
    and again as they grow (they hold no cycles; reference counting frees them)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def fields_of(rows: list[Any], fields: tuple[str, ...], wanted: list[str]
              ) -> dict[str, list[Any]]:
    """The `wanted` fields of NamedTuple `rows` as columns (one C-level pass each)."""
    return {name: list(map(itemgetter(fields.index(name)), rows)) for name in wanted}


def _keys(maps: Sequence[Mapping[str, Any]], skip: str | None) -> list[str]:
    seen: set[str] = set()
    last: Mapping[str, Any] | None = None
    for mapping in maps:
        if mapping is not last:             # Runs often share one mapping: look once
            seen.update(mapping)
            last = mapping
    seen.discard(skip or "")
    return sorted(k for k in seen if isinstance(k, str))


def typed(values: list[Any]) -> tuple[str, list[Any]]:
    """(type, values) of a column of authors' values (Task keys, metrics): booleans, whole
    numbers (within 64 bits), numbers, text, or else text with every value that is not
    text in JSON (lists, mappings, and a mix of kinds)."""
    kinds = set(map(type, values))
    kinds.discard(type(None))
    if kinds == {bool}:
        return BOOL, values
    if kinds <= {int, float} and _small([v for v in values if v.__class__ is int]):
        return (INT, values) if float not in kinds else \
            (FLOAT, [None if v is None else float(v) for v in values])
    if kinds <= {str}:
        return STR, values
    return STR, [v if v is None or v.__class__ is str else _json(v) for v in values]


def _small(ints: list[int]) -> bool:
    return not ints or (min(ints) >= -INT64 and max(ints) < INT64)


def _json(value: object) -> str:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except (TypeError, orjson.JSONEncodeError):       # YAML values JSON has no word for
        return str(value)


# --- checks ------------------------------------------------------------------------------

CHECK_COLUMNS: tuple[tuple[str, str], ...] = (
    ("eval", STR), ("task", STR), ("config", STR), ("model", STR), ("sample", INT),
    ("run_id", STR), ("grade_id", STR), ("grader_version", STR), ("counted", BOOL),
    ("position", INT), ("check", STR), ("checker", STR), ("verdict", STR), ("passed", INT),
    ("score", FLOAT), ("notes", STR), ("commit", STR),
)


def checks_table(results: Iterable[CheckResult]) -> Table:
    """One row per Check a counted (or errored) Grade lists."""
    with no_gc():
        rows = list(results)
        by_field = fields_of(rows, CHECK_FIELDS, [n for n, _kind in CHECK_COLUMNS])
    columns: dict[str, Sequence[Any]] = {name: by_field[name] for name, _kind in CHECK_COLUMNS}
    columns["passed"] = list(map(AS_INT.get, by_field["passed"]))
    return Table("checks", columns, dict(CHECK_COLUMNS))


# --- history -----------------------------------------------------------------------------

HISTORY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("sha", STR), ("short", STR), ("date", TIME), ("author", STR), ("subject", STR),
    ("commit_damage", INT), ("eval", STR), ("config", STR), ("model", STR), ("runs", INT),
    ("graded", INT), ("passed", INT), ("failed", INT), ("scored", INT), ("mean", FLOAT),
    ("stderr", FLOAT), ("mean_ci_low", FLOAT), ("mean_ci_high", FLOAT), ("pass_rate", FLOAT),
    ("pass_rate_ci_low", FLOAT), ("pass_rate_ci_high", FLOAT), ("grader_version", STR),
    ("damage", INT), ("marks", STR), ("changes", STR),
)


def history_table(doc: HistoryDoc) -> Table:
    """One row per commit x Eval x config x model of `log` (newest commit first), and one
    row with only the commit's columns for a listed commit without figures (as `log
    --format csv` has it)."""
    columns: dict[str, list[Any]] = {name: [] for name, _kind in HISTORY_COLUMNS}
    for commit in doc["commits"]:
        head = {"sha": commit["sha"], "short": commit["short"], "date": commit["date"] or None,
                "author": commit["author"], "subject": commit["subject"],
                "commit_damage": commit["damage"]}
        cells: list[dict[str, Any]] = [{}] if not commit["rows"] else []
        for row in commit["rows"]:
            none: list[float | None] = [None, None]
            mean_ci: list[float | None] = list(row["mean_ci"] or none)
            pass_ci: list[float | None] = list(row["pass_rate_ci"] or none)
            cells.append({"eval": row["eval"], "config": row["config"], "model": row["model"],
                          "runs": row["runs"], "graded": row["graded"], "passed": row["passed"],
                          "failed": row["failed"], "scored": row["scored"], "mean": row["mean"],
                          "stderr": row["stderr"], "mean_ci_low": mean_ci[0],
                          "mean_ci_high": mean_ci[1],
                          "pass_rate": row["pass_rate"], "pass_rate_ci_low": pass_ci[0],
                          "pass_rate_ci_high": pass_ci[1],
                          "grader_version": row["grader_version"], "damage": row["damage"],
                          "marks": ";".join(row["marks"]), "changes": "; ".join(row["changes"])})
        for cell in cells:
            for name, values in columns.items():
                values.append(head[name] if name in head else cell.get(name))
    return Table("history", dict(columns), dict(HISTORY_COLUMNS))
