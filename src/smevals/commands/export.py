"""`smevals export`: the runs and checks tables (and with `--history N`, the history
table) of `smevals.analysis`, one file each, as Parquet, CSV or JSON lines."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from smevals.analysis import files, frames, read, tables
from smevals.analysis.results import CheckResult, RunResult, checks_of
from smevals.errors import SmevalsError
from smevals.evaldef.load import display_path
from smevals.history.load import HistoryOptions, load_history
from smevals.sides.read import keep
from smevals.store.index import gc_paused


@dataclass(frozen=True)
class ExportOptions:
    selection: read.Selection
    fmt: str = "parquet"
    output: str = "."
    history: int | None = None          # also the history of the last N commits


def export_command(opts: ExportOptions) -> list[str]:
    """Write the tables; one line per file written (`Wrote runs.parquet (20 rows)`)."""
    if opts.fmt not in files.FORMATS:
        raise SmevalsError(f"--format: '{opts.fmt}' is not one of {', '.join(files.FORMATS)}")
    if opts.fmt == "parquet":
        frames.need("pyarrow", "--format parquet")
    if opts.history is not None and opts.history < 1:
        raise SmevalsError(f"--history: {opts.history} is not a positive number of commits")
    if opts.history is not None and opts.selection.rev:
        raise SmevalsError("--history reads the commits along HEAD; it does not go with --rev")
    if Path(opts.output).exists() and not Path(opts.output).is_dir():
        raise SmevalsError(f"--output: {opts.output} is not a folder")
    runs: list[RunResult] = []
    checks: list[CheckResult] = []
    for ev in read.evals(opts.selection):
        with gc_paused():
            found = list(ev.runs())
            checks += checks_of(found)
            runs += found
    made = [tables.runs_table(runs), tables.checks_table(checks)]
    if opts.history is not None:
        sel = opts.selection
        made.append(tables.history_table(load_history(
            HistoryOptions(sel.paths, read.log_spec(sel), opts.history))))
    keep((runs, checks))
    folder = _folder(opts.output)
    return [f"Wrote {display_path(files.write(table, opts.fmt, folder))} ({_rows(table)})"
            for table in made]


def _rows(table: tables.Table) -> str:
    return f"{table.rows} row" + ("" if table.rows == 1 else "s")


def _folder(output: str) -> Path:
    """The output folder, made when missing (once the tables are made: a bad input leaves
    nothing behind); exit 2 when it cannot be."""
    folder = Path(output)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SmevalsError(f"--output: cannot make the folder {output}: "
                           f"{exc.strerror or exc}") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise SmevalsError(f"--output: cannot write in {output}: permission denied")
    return folder
