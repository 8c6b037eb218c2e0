"""Tables (`tables.py`) as an Arrow table, a pandas DataFrame or a polars DataFrame.

pyarrow, pandas and polars are optional (the `analysis` extra brings pandas and pyarrow):
they are imported here, when a table is converted, never by `import smevals` or a
command's start-up. Each column gets its table type: whole numbers and booleans keep their
missing values (pandas' nullable `Int64` and `boolean`), times are UTC timestamps.
"""

from __future__ import annotations

import importlib
from datetime import UTC, datetime
from typing import Any

from smevals.analysis.tables import BOOL, FLOAT, INT, STR, TIME, Table
from smevals.errors import SmevalsError

BACKENDS = ("pandas", "polars", "arrow")
INSTALL = "pip install 'pandas>=2.1' 'pyarrow>=14' where smevals is installed"
POLARS = "pip install 'polars>=0.20' where smevals is installed"


def need(module: str, what: str) -> Any:
    """`module`, or a SmevalsError naming what needs it and the install line."""
    try:
        return importlib.import_module(module)
    except ImportError:
        if module == "polars":
            raise SmevalsError(f"{what} needs polars, which is not installed: {POLARS}") \
                from None
        raise SmevalsError(f"{what} needs the optional `analysis` extra (pandas and pyarrow), "
                           f"which is not installed: {INSTALL}") from None


def to_arrow(table: Table, what: str = "an Arrow table") -> Any:
    """A pyarrow.Table with the table's types."""
    pa = need("pyarrow", what)
    kinds = {STR: pa.string(), INT: pa.int64(), FLOAT: pa.float64(), BOOL: pa.bool_()}
    arrays = []
    for name, values in table.columns.items():
        kind = table.types[name]
        arrays.append(_times(pa, values) if kind == TIME else
                      pa.array(values, kinds[kind], from_pandas=False))
    return pa.Table.from_arrays(arrays, names=list(table.columns))


def _times(pa: Any, values: Any) -> Any:
    """ISO-8601 texts as UTC timestamps (a text without an offset is taken as UTC; one
    that is not a time is missing)."""
    kind = pa.timestamp("us", tz="UTC")
    try:
        return pa.array(values, pa.string()).cast(kind)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return pa.array([_time(v) for v in values], kind)


def _time(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def to_pandas(table: Table, what: str = "a pandas DataFrame") -> Any:
    pd = need("pandas", what)
    pa = need("pyarrow", what)
    nullable = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    return to_arrow(table, what).to_pandas(types_mapper=nullable.get)


def to_polars(table: Table, what: str = "a polars DataFrame") -> Any:
    pl = need("polars", what)
    return pl.from_arrow(to_arrow(table, what))


def frame(table: Table, backend: str, what: str) -> Any:
    """The table as `backend` (BACKENDS) holds it."""
    if backend == "pandas":
        return to_pandas(table, what)
    if backend == "polars":
        return to_polars(table, what)
    if backend == "arrow":
        return to_arrow(table, what)
    raise SmevalsError(f"backend: '{backend}' is not one of {', '.join(BACKENDS)}")
