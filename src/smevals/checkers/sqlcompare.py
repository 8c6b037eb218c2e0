"""The pure side of the SQL checkers: the SQL in an answer, a top-level ORDER BY, and two
result sets compared with their columns as given (multisets of rows, or lists when order
counts; values compared after type normalisation). The rules of Spider and BIRD, which
also try other orders of the columns or compare sets, are in sqlmatch.py."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from smevals.checkers.inputs import fenced_block

SQL_TAGS = frozenset({"sql", "sqlite", "sqlite3", "postgresql", "mysql"})
SHOWN_ROWS = 5
SHOWN_CHARS = 200

Row = tuple[Any, ...]


def extract_sql(text: str) -> str:
    """The first fenced block tagged sql (else the first untagged one, else the whole text),
    without trailing semicolons."""
    return strip_sql(fenced_block(text, SQL_TAGS))


def strip_sql(sql: str) -> str:
    out = sql.strip()
    while out.endswith(";"):
        out = out[:-1].rstrip()
    return out


def _skip_quoted(sql: str, i: int) -> int:
    """The index after the string, quoted name or comment that starts at `i` (else `i`)."""
    ch = sql[i]
    if ch in "'\"`[":
        close = "]" if ch == "[" else ch
        j = i + 1
        while j < len(sql):
            if sql[j] == close:
                if close != "]" and j + 1 < len(sql) and sql[j + 1] == close:
                    j += 2            # a doubled quote inside the string
                    continue
                return j + 1
            j += 1
        return len(sql)
    if sql.startswith("--", i):
        end = sql.find("\n", i)
        return len(sql) if end < 0 else end + 1
    if sql.startswith("/*", i):
        end = sql.find("*/", i + 2)
        return len(sql) if end < 0 else end + 2
    return i


def top_level_words(sql: str) -> list[str]:
    """The words of `sql` outside strings, quoted names, comments and parentheses, upper-cased."""
    words: list[str] = []
    depth, i, start = 0, 0, -1
    while i < len(sql):
        skipped = _skip_quoted(sql, i)
        ch = sql[i]
        is_word = ch.isalnum() or ch == "_"
        if start >= 0 and not is_word:
            if depth == 0:
                words.append(sql[start:i].upper())
            start = -1
        if skipped != i:
            i = skipped
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif is_word and start < 0:
            start = i
        i += 1
    if start >= 0 and depth == 0:
        words.append(sql[start:].upper())
    return words


def has_top_level_order_by(sql: str) -> bool:
    """ORDER BY outside any subquery, window, function call, string or comment."""
    words = top_level_words(sql)
    return any(a == "ORDER" and b == "BY" for a, b in zip(words, words[1:], strict=False))


# ---- comparing results ------------------------------------------------------------------


def rank(value: object) -> tuple[int, Any]:
    """A sort key across SQLite's types (NULL < numbers < text < blobs), as SQLite orders."""
    if value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (1, int(value))
    if isinstance(value, int | float):
        return (1, value)          # ints stay exact; 1 == 1.0 and hash alike
    if isinstance(value, str):
        return (2, value)
    if isinstance(value, bytes | bytearray | memoryview):
        return (3, bytes(value))
    return (4, repr(value))


def row_key(row: Row) -> tuple[tuple[int, Any], ...]:
    return tuple(rank(v) for v in row)


def values_match(a: object, b: object, tolerance: float) -> bool:
    ra, rb = rank(a), rank(b)
    if ra[0] != rb[0]:
        return False
    if ra[0] != 1:
        return bool(ra[1] == rb[1])
    x, y = ra[1], rb[1]
    if x == y:
        return True
    if isinstance(x, int) and isinstance(y, int):
        return False
    if math.isnan(x) or math.isnan(y):
        return False
    return bool(abs(x - y) <= tolerance * max(1.0, abs(x), abs(y)))


def rows_match(a: Row, b: Row, tolerance: float) -> bool:
    return len(a) == len(b) and all(values_match(x, y, tolerance) for x, y in zip(a, b,
                                                                                strict=True))


def first_difference(got: Sequence[Row], want: Sequence[Row], ordered: bool,
                     tolerance: float) -> dict[str, Any] | None:
    """None when the results match; else what differs (bounded, JSON-ready)."""
    if not ordered:
        got, want = sorted(got, key=row_key), sorted(want, key=row_key)
    index = next((i for i, (g, w) in enumerate(zip(got, want, strict=False))
                  if not rows_match(g, w, tolerance)), min(len(got), len(want)))
    if index == len(got) == len(want):
        return None
    if not ordered and len(got) == len(want) and _unmatched(got, want, tolerance) == ([], []):
        return None                 # near-equal floats sorted apart, paired within tolerance
    return _difference(got, want, ordered, index, tolerance)


def rows_equal(got: Sequence[Row], want: Sequence[Row], ordered: bool, tolerance: float
               ) -> bool:
    """Whether the results match (as `first_difference` finds), without saying how not: the
    columns holding no float must match exactly first, which rules most pairs out at once."""
    if len(got) != len(want):
        return False
    if ordered:
        return all(rows_match(g, w, tolerance) for g, w in zip(got, want, strict=True))
    width = len(want[0]) if want else 0
    exact = [i for i in range(width) if tolerance <= 0 or (
        not any(isinstance(r[i], float) for r in got)
        and not any(isinstance(r[i], float) for r in want))]

    def project(rows: Sequence[Row]) -> Counter[Any]:
        return Counter(tuple(rank(r[i]) for i in exact) for r in rows)

    if project(got) != project(want):
        return False
    return len(exact) == width or first_difference(got, want, False, tolerance) is None


def _difference(got: Sequence[Row], want: Sequence[Row], ordered: bool, index: int,
                tolerance: float) -> dict[str, Any]:
    out: dict[str, Any] = {"rows": len(got), "expected_rows": len(want)}
    if ordered:
        out["first_difference_at"] = index
        out["got"] = shown(got[index:index + SHOWN_ROWS])
        out["expected"] = shown(want[index:index + SHOWN_ROWS])
        return out
    missing, extra = _unmatched(got, want, tolerance)
    out["missing"] = shown(missing[:SHOWN_ROWS])
    out["unexpected"] = shown(extra[:SHOWN_ROWS])
    return out


def _unmatched(got: Sequence[Row], want: Sequence[Row], tolerance: float
               ) -> tuple[list[Row], list[Row]]:
    """Rows of `want` not in `got`, and rows of `got` not in `want` (as multisets; exact
    values first, then within the tolerance)."""
    missing = _beyond(want, Counter(row_key(r) for r in got))
    extra = _beyond(got, Counter(row_key(r) for r in want))
    if tolerance > 0:
        missing, extra = _pair_close(missing, extra, tolerance)
    return missing, extra


def _beyond(rows: Sequence[Row], other: Counter[Any]) -> list[Row]:
    """The rows that `other` (a multiset of row keys) does not account for."""
    out = []
    for row in rows:
        key = row_key(row)
        if other[key] > 0:
            other[key] -= 1
        else:
            out.append(row)
    return out


def _pair_close(missing: list[Row], extra: list[Row], tolerance: float
                ) -> tuple[list[Row], list[Row]]:
    """Pair the rows left over on each side within the tolerance: walking both in order (two
    near-equal rows sort side by side), then, when few are left, each against each; what
    finds no partner stays."""
    missing, extra = _walk_pairs(missing, extra, tolerance)
    if not missing or not extra or len(missing) * len(extra) > PAIR_LIMIT:
        return missing, extra
    left = list(extra)
    still: list[Row] = []
    for row in missing:
        partner = next((i for i, e in enumerate(left) if rows_match(row, e, tolerance)), None)
        if partner is None:
            still.append(row)
        else:
            left.pop(partner)
    return still, left


PAIR_LIMIT = 100_000        # pairs of left-over rows compared each against each, at most


def _walk_pairs(missing: list[Row], extra: list[Row], tolerance: float
                ) -> tuple[list[Row], list[Row]]:
    a = sorted(missing, key=row_key)
    b = sorted(extra, key=row_key)
    keys_a, keys_b = [row_key(r) for r in a], [row_key(r) for r in b]
    still_a: list[Row] = []
    still_b: list[Row] = []
    i = j = 0
    while i < len(a) and j < len(b):
        if rows_match(a[i], b[j], tolerance):
            i, j = i + 1, j + 1
        elif keys_a[i] < keys_b[j]:
            still_a.append(a[i])
            i += 1
        else:
            still_b.append(b[j])
            j += 1
    return still_a + a[i:], still_b + b[j:]


def shown(rows: Sequence[Row]) -> list[list[Any]]:
    return [[_shown_value(v) for v in row] for row in rows]


def _shown_value(value: object) -> object:
    if isinstance(value, bytes | bytearray | memoryview):
        text = "x'" + bytes(value)[:SHOWN_CHARS // 2].hex() + "'"
        return text if len(value) <= SHOWN_CHARS // 2 else text + "…"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str) and len(value) > SHOWN_CHARS:
        return value[:SHOWN_CHARS] + "…"
    return value
