"""A table as a file: Parquet (through pyarrow), CSV or JSON lines (no extra needed).

Every format has the table's columns in its order. CSV: a header line, an empty field for
a missing value, `true`/`false`, numbers as Python writes them, times as recorded.
JSON lines: one object per row, `null` for a missing value. Parquet: typed columns (whole
numbers int64, times UTC timestamps). A file is written beside its final name and renamed
into place, so a reader never sees half of one.
"""

from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

from smevals.analysis.frames import to_arrow
from smevals.analysis.tables import Table
from smevals.errors import SmevalsError

FORMATS = ("parquet", "csv", "jsonl")


def write(table: Table, fmt: str, folder: Path) -> Path:
    """`folder/<table name>.<fmt>`, replacing a file of that name."""
    target = folder / f"{table.name}.{fmt}"
    fd, tmp = tempfile.mkstemp(prefix=f".{table.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        if fmt == "parquet":
            _parquet(table, Path(tmp))
        elif fmt == "csv":
            _csv(table, Path(tmp))
        else:
            _jsonl(table, Path(tmp))
        os.replace(tmp, target)
    except OSError as exc:
        raise SmevalsError(f"--output: cannot write {target}: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def _parquet(table: Table, path: Path) -> None:
    from pyarrow import parquet

    parquet.write_table(to_arrow(table, "--format parquet"), path)


def _cell(value: object) -> Any:
    if value is None:
        return ""
    if value.__class__ is bool:
        return "true" if value else "false"
    if value.__class__ is float:
        return repr(value)
    return value


def _csv(table: Table, path: Path) -> None:
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(table.columns)
        columns = [[_cell(v) for v in values] for values in table.columns.values()]
        writer.writerows(zip(*columns, strict=True))


def _jsonl(table: Table, path: Path) -> None:
    names = list(table.columns)
    with path.open("wb") as out:
        for values in zip(*table.columns.values(), strict=True):
            out.write(orjson.dumps(dict(zip(names, values, strict=True)),
                                   option=orjson.OPT_APPEND_NEWLINE))
