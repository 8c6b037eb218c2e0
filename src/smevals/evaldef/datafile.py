"""Tasks from data files: `tasks/*.jsonl`, `tasks/*.csv` and `tasks/*.tsv`, one Task per row.

A JSONL line is a JSON object: its keys are the Task's keys (JSON types kept) and its
`grading` object holds the grading keys. A CSV or TSV file has a header row; every cell is a
string, and a column named `grading.KEY` is the grading key KEY. A row's name is its `name`
key, else its `id` (a JSON integer id is written in decimal), else `<file stem>-<row
number>`, rows counted from 1 (a CSV header and blank lines are not rows); an empty (or
null) `name` or `id` counts as none.

Every problem is a `Problem` at file:line:col, and a bad row never stops the others from
being read. Sizes are checked before anything is parsed: MAX_FILE for the file, MAX_LINE for
one line. A UTF-8 byte order mark at the start is accepted and dropped.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from smevals.errors import Problem
from smevals.evaldef.yamlio import INT_MAX, INT_MIN, MAX_DEPTH, FieldPath, YamlDoc

if TYPE_CHECKING:
    from _csv import Reader

SUFFIXES = (".jsonl", ".csv", ".tsv")
MAX_LINE = 1 << 20          # bytes in one line (1 MiB)
MAX_FILE = 256 << 20        # bytes in one data file (256 MiB)
MAX_NAME = 200              # characters in a Task name
BOM = b"\xef\xbb\xbf"

# (first line of the row, name, the Task's keys with `name`, its grading keys)
Row = tuple[int, str, dict[str, Any], dict[str, Any]]

_BAD_NAME_CHARS = re.compile(r"[\x00-\x1f\x7f/\\]")
_SURROGATE = re.compile(r"[\udc80-\udcff]")


def is_data_file(name: str) -> bool:
    return os.path.splitext(name)[1] in SUFFIXES


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a Task name (it must be one a YAML Task file could have), or
    None when it can."""
    if not name:
        return "must not be empty"
    if len(name) > MAX_NAME:
        return f"is {len(name)} characters long, more than {MAX_NAME}"
    if name != name.strip():
        return "must not start or end with white space"
    if name in (".", ".."):
        return f"cannot be '{name}'"
    bad = _BAD_NAME_CHARS.search(name)
    if bad:
        return f"must not hold {_char(bad.group())} (a Task name must be usable as a file name)"
    return None


def _char(ch: str) -> str:
    return {"/": "'/'", "\\": "'\\'"}.get(ch, f"the control character U+{ord(ch):04X}")


def read_rows(path: Path, shown: str) -> tuple[list[Row], list[Problem]]:
    """The rows of one data file that make valid Tasks, and a Problem for every other one."""
    try:
        size = os.stat(path).st_size
        if size > MAX_FILE:
            return [], [Problem(shown, 1, 1, f"file is {size:,} bytes, more than the limit of "
                                f"{MAX_FILE >> 20} MiB for a data file; split it into several "
                                "files")]
        raw = path.read_bytes()
    except OSError as exc:
        return [], [Problem(shown, 1, 1, f"cannot read file: {exc.strerror}")]
    reader = _Reader(shown, path.stem)
    if raw.startswith(BOM):
        raw = raw[len(BOM):]
    if path.suffix == ".jsonl":
        reader.jsonl(raw)
    else:
        reader.table(raw, "excel-tab" if path.suffix == ".tsv" else "excel")
    if not reader.rows and not reader.problems:
        reader.problems.append(Problem(shown, 1, 1, reader.empty))
    return reader.rows, reader.problems


class _Reader:
    def __init__(self, shown: str, stem: str):
        self.lines: list[str] = []
        self.sep = ","
        self.shown = shown
        self.stem = stem
        self.number = 0                  # data rows seen so far
        self.rows: list[Row] = []
        self.problems: list[Problem] = []
        self.empty = "the data file has no rows (each line or row is one Task)"

    def problem(self, line: int, col: int, message: str, field: str = "") -> None:
        self.problems.append(Problem(self.shown, line, col, message, field))

    def _sized(self, line: int, data: bytes) -> bool:
        if len(data) <= MAX_LINE:
            return True
        self.problem(line, 1, f"line is {len(data):,} bytes, more than the limit of "
                     f"{MAX_LINE >> 20} MiB for one line of a data file")
        return False

    # JSONL ---------------------------------------------------------------------------

    def jsonl(self, raw: bytes) -> None:
        for index, data in enumerate(raw.split(b"\n")):
            line = index + 1
            if not data.strip():
                continue
            self.number += 1
            if self._sized(line, data):
                self._json_line(line, data)

    def _json_line(self, line: int, data: bytes) -> None:
        nul = data.find(b"\0")
        if nul >= 0:
            self.problem(line, _col(data, nul), "NUL byte in the file (is it a binary file?)")
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.problem(line, _col(data, exc.start), f"line is not valid UTF-8 (byte "
                         f"0x{data[exc.start]:02x})")
            return
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            self.problem(line, exc.colno, f"invalid JSON: {exc.msg}")
            return
        if not isinstance(value, dict):
            self.problem(line, 1, f"each line must be a JSON object, got {_kind(value)}")
            return
        if text.count("[") + text.count("{") > MAX_DEPTH and depth(value) > MAX_DEPTH:
            self.problem(line, 1, f"values are nested more than {MAX_DEPTH} levels deep")
            return
        huge = _huge_int(text)
        if huge is not None:
            self.problem(line, text.find(huge) + 1, f"the integer {huge[:40]} is outside 64 bits "
                         f"({INT_MIN} to {INT_MAX})")
            return
        twice = _repeated_key(text)
        if twice is not None:
            self.problem(line, _key_col(text, twice, 2), f"duplicate key '{twice}' (most JSON "
                         "readers would keep only its last value)")
            return
        grading = value.pop("grading", None)
        if grading is not None and not isinstance(grading, dict):
            self.problem(line, _key_col(text, "grading"),
                         f"expected a JSON object, got {_kind(grading)}", "grading")
            return
        self._row(line, value, grading or {}, lambda key: _key_col(text, key))

    # CSV and TSV ---------------------------------------------------------------------

    def table(self, raw: bytes, dialect: str) -> None:
        self.empty = "the data file has no header and no rows (the first row names the columns)"
        lines = raw.split(b"\n")
        for index, data in enumerate(lines):
            if not self._sized(index + 1, data):
                lines[index] = b""            # read the other rows as if this line were empty
        import csv
        import io

        text = b"\n".join(lines).decode("utf-8", "surrogateescape")
        self.lines = text.split("\n")
        self.sep = "\t" if dialect == "excel-tab" else ","
        csv.field_size_limit(max(csv.field_size_limit(), MAX_FILE))   # lines are bounded
        reader = csv.reader(io.StringIO(text, newline=""), dialect=dialect)
        try:
            self._table_rows(reader)
        except csv.Error as exc:
            self.problem(reader.line_num, 1, f"invalid {dialect_name(dialect)}: {exc}")

    def _table_rows(self, reader: Reader) -> None:
        header = next(reader, None)
        if header is None:
            return
        columns = self._columns(header, 1)
        if columns is None:
            return
        self.empty = "the data file has a header but no rows"
        end = reader.line_num
        for cells in reader:
            line, end = end + 1, reader.line_num
            if not cells:
                continue                       # a blank line is not a row
            self.number += 1
            if self._cells_ok(line, cells, len(header)):
                self._cell_row(line, columns, cells)

    def _columns(self, header: list[str], line: int) -> list[tuple[str, str]] | None:
        """(`task` or `grading`, key) for each column, or None with the problems added."""
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        ok = True
        for index, title in enumerate(header):
            where = f"column {index + 1}"
            kind, key = ("grading", title[8:]) if title.startswith("grading.") else ("task", title)
            why = _column_problem(title, key, seen)
            if why or not self._cells_ok(line, [title], 1):
                if why:
                    self.problem(line, self._cols(line, header)[index],
                                 f"{where} of the header: {why}")
                ok = False
            seen.add(title)
            out.append((kind, key))
        return out if ok else None

    def _cells_ok(self, line: int, cells: list[str], columns: int) -> bool:
        if len(cells) != columns:
            self.problem(line, 1, f"row {self.number} has {len(cells)} field"
                         f"{'' if len(cells) == 1 else 's'} but the header has {columns} "
                         "columns")
            return False
        for cell in cells:
            if "\0" in cell:
                self.problem(line, 1, "NUL byte in the file (is it a binary file?)")
                return False
            bad = _SURROGATE.search(cell)
            if bad:
                byte = ord(bad.group()) - 0xDC00
                self.problem(line, 1, f"row is not valid UTF-8 (byte 0x{byte:02x})")
                return False
        return True

    def _cell_row(self, line: int, columns: list[tuple[str, str]], cells: list[str]) -> None:
        doc: dict[str, Any] = {}
        grading: dict[str, Any] = {}
        for (kind, key), cell in zip(columns, cells, strict=True):
            (grading if kind == "grading" else doc)[key] = cell
        index = {key: i for i, (kind, key) in enumerate(columns) if kind == "task"}
        self._row(line, doc, grading,
                  lambda key: self._cols(line, cells)[index[key]] if key in index else 1)

    def _cols(self, line: int, cells: list[str]) -> list[int]:
        """The column where each cell of a one-line row starts (all 1 when the row is quoted
        or spans lines, whose cells cannot be placed without reading it again)."""
        text = self.lines[line - 1] if line <= len(self.lines) else ""
        if '"' in text or text.rstrip("\r") != self.sep.join(cells):
            return [1] * len(cells)
        cols, at = [], 1
        for cell in cells:
            cols.append(at)
            at += len(cell) + 1
        return cols

    # rows of either kind ---------------------------------------------------------------

    def _row(self, line: int, doc: dict[str, Any], grading: dict[str, Any],
             col: Any) -> None:
        # an empty `name` (or `id`) cell is no name: the row falls back as if it had none
        key = next((k for k in ("name", "id") if doc.get(k) not in (None, "")), "")
        value = doc[key] if key else f"{self.stem}-{self.number}"
        if isinstance(value, int) and not isinstance(value, bool) and key == "id":
            value = str(value)
        if not isinstance(value, str):
            self.problem(line, col(key), f"a Task name must be a string"
                         f"{' (or an integer id)' if key == 'id' else ''}, got {_kind(value)}",
                         key)
            return
        why = name_problem(value)
        if why:
            self.problem(line, col(key) if key else 1,
                         f"task name {value[:60]!r} {why}", key or "name")
            return
        nul = _nul_key(doc) or _nul_key(grading, "grading.")
        if nul:
            self.problem(line, col(nul.split(".")[-1]), "the value holds a NUL character, "
                         "which no runner or checker can be given", nul)
            return
        doc["name"] = value
        if self._schema_ok(line, doc, grading, col):
            self.rows.append((line, value, doc, grading))

    def _schema_ok(self, line: int, doc: dict[str, Any], grading: dict[str, Any],
                   col: Any) -> bool:
        from smevals.evaldef.schema import schema_problems
        from smevals.schemas import violations

        whole = {**doc, "grading": grading} if grading else doc
        if not violations("task", whole):
            return True
        locs: dict[FieldPath, tuple[int, int]] = {(): (line, 1)}
        locs.update({(k,): (line, col(k)) for k in whole})
        self.problems.extend(schema_problems(YamlDoc(self.shown, whole, locs, dict(locs)),
                                             "task"))
        return False


def dialect_name(dialect: str) -> str:
    return "TSV" if dialect == "excel-tab" else "CSV"


def _column_problem(title: str, key: str, seen: set[str]) -> str | None:
    if title in seen:
        return f"the column '{title}' is named twice"
    if not title:
        return "a column needs a name"
    if title == "grading":
        return "a column cannot be named 'grading'; name grading keys 'grading.KEY'"
    if not key:
        return "'grading.' needs a key after the dot ('grading.expected')"
    return None


def _nul_key(values: dict[str, Any], prefix: str = "") -> str | None:
    """The first key whose name or value (at any depth) holds a NUL character."""
    for key, value in values.items():
        stack = [key, value]
        while stack:
            item = stack.pop()
            if isinstance(item, str) and "\0" in item:
                return prefix + str(key).replace("\0", "\\0")
            if isinstance(item, dict):
                stack.extend(k for pair in item.items() for k in pair)
            elif isinstance(item, list):
                stack.extend(item)
    return None


_LONG_DIGITS = re.compile(r"\d{19}")


def _huge_int(text: str) -> str | None:
    """An integer of one JSON line outside 64 bits (orjson would make it a float, silently,
    or keep one YAML refuses), as written; None when there is none."""
    if not _LONG_DIGITS.search(text):
        return None
    import json

    def check(literal: str) -> int:
        if not INT_MIN <= int(literal) <= INT_MAX:
            raise _Huge(literal)
        return 0

    try:
        json.loads(text, parse_int=check)
    except _Huge as exc:
        return str(exc.args[0])
    except (ValueError, RecursionError):
        return None
    return None


class _Huge(Exception):
    pass


def _col(data: bytes, at: int) -> int:
    """The 1-based column (in characters) of byte `at` of one line."""
    return len(data[:at].decode("utf-8", "replace")) + 1


def _key_col(text: str, key: str, nth: int = 1) -> int:
    """The column of the `nth` `"key"` in one JSON line (1 when it cannot be found)."""
    quoted, at = orjson.dumps(key).decode(), -1
    for _ in range(nth):
        at = text.find(quoted, at + 1)
        if at < 0:
            return 1
    return at + 1


def depth(value: object) -> int:
    """How many lists and objects deep `value` goes (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item \
            if isinstance(item, list) else ()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest


class _Repeated(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> None:
    if len(pairs) > 1 and len({key for key, _ in pairs}) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Repeated(key)
            seen.add(key)


def _repeated_key(text: str) -> str | None:
    """A key some object of a valid JSON line names twice (orjson keeps the last silently,
    where YAML files refuse a duplicate key), or None."""
    import json

    try:
        json.loads(text, object_pairs_hook=_pairs)
    except _Repeated as exc:
        return str(exc.args[0])
    except (ValueError, RecursionError):    # what orjson took and json cannot: no duplicate
        return None
    return None


def _kind(value: object) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    text = orjson.dumps(value).decode()
    return f"{'a string' if isinstance(value, str) else 'a number'} ({text[:40]})"
