"""Whether two query results match, as the execution accuracy of Spider and of BIRD defines it.

Spider (test-suite-sql-eval's `result_eq`, the default): two empty results match whatever
their columns; otherwise the row counts and column counts must agree and some order of the
answer's columns must make its rows equal to the reference's, as multisets, or as lists when
order counts. BIRD (`mode: bird`): the rows as sets (duplicates and order never count), the
columns in their order. Both compare values by type and value (`1` matches `1.0`, NULL only
NULL). Where smevals deviates on purpose (documented in docs/checkers.md): order counts only
under a top-level ORDER BY (Spider looks for the words anywhere in the reference), and two
numbers within `float_tolerance` match (Spider and BIRD compare floats exactly).

Trying the orders of the columns is bounded: only orders that pair columns holding the same
values (and leading groups of columns holding the same rows) are tried, columns holding the
very same values are never swapped, and the values compared over all orders tried may not
pass MAX_WORK (the Check then fails, asking for `columns: strict`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from smevals.checkers.base import fail
from smevals.checkers.sqlcompare import (
    SHOWN_ROWS,
    Row,
    first_difference,
    rank,
    row_key,
    rows_equal,
    rows_match,
    shown,
    values_match,
)

SPIDER, BIRD = "spider", "bird"
ANY_ORDER, STRICT = "any_order", "strict"
MAX_WORK = 1_000_000        # values compared over every order of the columns tried
ORDER_COST = 500            # counted for each order compared in full, besides its values


@dataclass(frozen=True)
class Rules:
    mode: str = SPIDER
    columns: str = ANY_ORDER
    ordered: bool = False
    tolerance: float = 0.0


Mismatch = tuple[str, dict[str, Any]]       # the notes and details of a failed comparison


def mismatch(got: Sequence[Row], want: Sequence[Row], widths: tuple[int, int | None],
             rules: Rules) -> Mismatch | None:
    """None when `got` matches `want` under `rules`; else why not. `widths` are the column
    counts of each side (None when the expected side gives no rows and no columns)."""
    if not got and not want:
        return None                     # two empty results, whatever their columns
    width, want_width = widths
    if got and want and want_width is not None and width != want_width:
        return (f"the query returns {width} column(s), expected {want_width}", {})
    if rules.mode == BIRD:
        return _bird(got, want, rules)
    return _spider(got, want, rules)


def _spider(got: Sequence[Row], want: Sequence[Row], rules: Rules) -> Mismatch | None:
    if len(got) != len(want):
        return _shown_difference(got, want, rules)
    for order in _orders(got, want, rules):
        if rows_equal(_reordered(got, order), want, rules.ordered, rules.tolerance):
            return None
    return _shown_difference(got, want, rules)


def _bird(got: Sequence[Row], want: Sequence[Row], rules: Rules) -> Mismatch | None:
    if not got or not want:
        return _shown_difference(got, want, Rules(BIRD, rules.columns, False, rules.tolerance))
    for order in _orders(got, want, rules):
        if set_difference(_reordered(got, order), want, rules.tolerance) == ([], []):
            return None
    missing, extra = set_difference(got, want, rules.tolerance)
    return ("the rows differ from the expected ones (compared as sets)",
            {"rows": len(got), "expected_rows": len(want), "missing": shown(missing[:SHOWN_ROWS]),
             "unexpected": shown(extra[:SHOWN_ROWS])})


def _shown_difference(got: Sequence[Row], want: Sequence[Row], rules: Rules) -> Mismatch:
    """What differs, shown with the columns in the order the query gave them."""
    difference = first_difference(got, want, rules.ordered, rules.tolerance) or {
        "rows": len(got), "expected_rows": len(want)}
    n, expected = difference["rows"], difference["expected_rows"]
    if n != expected:
        notes = f"the query returns {n} row(s), expected {expected}"
    elif rules.ordered:
        notes = (f"the rows differ in order or value from row "
                 f"{difference.get('first_difference_at', 0)} (the reference is ordered)")
    else:
        notes = "the rows differ from the expected ones"
    return notes, {"ordered": rules.ordered, **difference}


def _reordered(rows: Sequence[Row], order: tuple[int, ...] | None) -> Sequence[Row]:
    if order is None:
        return rows
    return [tuple(row[j] for j in order) for row in rows]


# ---- sets (BIRD) -------------------------------------------------------------------------


def set_difference(got: Sequence[Row], want: Sequence[Row], tolerance: float
                   ) -> tuple[list[Row], list[Row]]:
    """(distinct expected rows the query did not return, distinct rows it returned that were
    not expected): rows as sets, equal within the tolerance."""
    return (sorted(_uncovered(want, got, tolerance), key=row_key),
            sorted(_uncovered(got, want, tolerance), key=row_key))


def _uncovered(rows: Sequence[Row], other: Sequence[Row], tolerance: float) -> list[Row]:
    keys = {row_key(r) for r in other}
    out, seen = [], set()
    for row in rows:
        key = row_key(row)
        if key in seen or key in keys:
            continue
        seen.add(key)
        if tolerance <= 0 or not any(rows_match(row, o, tolerance) for o in other[:1000]):
            out.append(row)
    return out


# ---- the orders of the columns to try ----------------------------------------------------


def _orders(got: Sequence[Row], want: Sequence[Row], rules: Rules
            ) -> Iterator[tuple[int, ...] | None]:
    """The column orders to try: as given (None) first, then, unless `columns: strict`, every
    other order that pairs each expected column with a column of the query holding the same
    values (and each leading group of columns with columns holding the same rows)."""
    yield None
    width = len(want[0]) if want else 0
    if rules.columns == STRICT or width < 2 or not got:
        return
    search = _Search(got, want, rules)
    identity = tuple(range(width))
    for order in search.bijections():
        if order != identity:
            search.spend(len(got) * width + ORDER_COST)
            yield order


class _Search:
    """The orders of the query's columns that may make its rows the expected ones, found by
    backtracking over the expected columns, with a budget of values looked at.

    Each leading group of expected columns must hold the same rows (projected on them) as
    the query's columns chosen for it: checked on the columns compared exactly (no float on
    either side), with one hash per row carried from column to column, so each step costs
    one pass over the rows. A hash collision can only let an order through to the full
    comparison, never turn a matching one away."""

    def __init__(self, got: Sequence[Row], want: Sequence[Row], rules: Rules):
        self.got, self.rules = got, rules
        self.width = width = len(want[0])
        self.work = 0
        columns_got = [[row[j] for row in got] for j in range(width)]
        columns_want = [[row[i] for row in want] for i in range(width)]
        sig_got = [_signature(c, rules.mode == BIRD) for c in columns_got]
        sig_want = [_signature(c, rules.mode == BIRD) for c in columns_want]
        floats_got = [_has_float(sig) for sig in sig_got]
        self.candidates = _candidates(sig_got, sig_want, floats_got, rules.tolerance)
        self.exact = [rules.tolerance <= 0 or (not _has_float(sig_want[i]) and not any(
            floats_got[j] for j in self.candidates[i])) for i in range(width)]
        self.twins = _twins(columns_got)
        self.want_rows = self._prefixes(columns_want)
        self.got_rows: list[list[int]] = [[]] * width

    def _prefixes(self, columns: list[list[Any]]) -> list[Any]:
        """For each depth, the expected rows projected on the exact columns up to it (one
        hash per row), as a multiset (a set for BIRD)."""
        out: list[Any] = []
        hashes = [0] * len(columns[0]) if columns else []
        for i, column in enumerate(columns):
            if self.exact[i]:
                hashes = [hash((h, rank(v))) for h, v in zip(hashes, column, strict=True)]
            out.append(self._bag(hashes))
        return out

    def _bag(self, hashes: list[int]) -> set[int] | Counter[int]:
        return set(hashes) if self.rules.mode == BIRD else Counter(hashes)

    def spend(self, values: int) -> None:
        self.work += values
        if self.work > MAX_WORK:
            fail(f"too many orders of the {self.width} columns could match the expected ones "
                 f"(the search stops after {MAX_WORK:,} values compared); give `columns: "
                 f"strict` to compare the columns in the order the query gives them")

    def fits(self, order: list[int], depth: int) -> bool:
        """Whether the expected columns 0..depth, paired with the query's columns `order`,
        hold the same rows (projected on the exact columns)."""
        before = self.got_rows[depth - 1] if depth else [0] * len(self.got)
        if not self.exact[depth]:
            self.got_rows[depth] = before
            return True
        self.spend(len(self.got))
        j = order[depth]
        hashes = [hash((h, rank(row[j]))) for h, row in zip(before, self.got, strict=True)]
        self.got_rows[depth] = hashes
        return bool(self._bag(hashes) == self.want_rows[depth])

    def bijections(self) -> Iterator[tuple[int, ...]]:
        """Every order (the query's column for each expected column, all different) drawn
        from the candidates, a column taken only after its twin before it, and each prefix
        fitting; iterative, as a query may have hundreds of columns."""
        width, candidates = self.width, self.candidates
        if any(not c for c in candidates):
            return
        used, order = [False] * width, [-1] * width
        self._tried = [0] * width
        depth = 0
        while depth >= 0:
            if order[depth] >= 0:                   # coming back: free what this depth took
                used[order[depth]] = False
                order[depth] = -1
            j = self._next(depth, used)
            if j < 0:
                self._tried[depth] = 0
                depth -= 1
                continue
            used[j], order[depth] = True, j
            if not self.fits(order, depth):
                continue
            if depth == width - 1:
                yield tuple(order)
                continue
            depth += 1

    def _next(self, depth: int, used: list[bool]) -> int:
        """The next candidate column for `depth` that is free (and whose twin is taken)."""
        choices, tried = self.candidates[depth], self._tried
        while tried[depth] < len(choices):
            j = choices[tried[depth]]
            tried[depth] += 1
            if not used[j] and (self.twins[j] < 0 or used[self.twins[j]]):
                return j
        return -1


def _signature(column: list[Any], as_set: bool) -> Counter[Any] | frozenset[Any]:
    """A column's values (rank keys) as a multiset, or as a set for BIRD."""
    keys = [rank(v) for v in column]
    return frozenset(keys) if as_set else Counter(keys)


def _has_float(signature: Counter[Any] | frozenset[Any]) -> bool:
    return any(isinstance(key[1], float) for key in signature)


Signature = Counter[Any] | frozenset[Any]


def _candidates(got: list[Signature], want: list[Signature], floats_got: list[bool],
                tolerance: float) -> list[list[int]]:
    """For each expected column, the query's columns that may stand for it: those holding
    the same values (as multisets for Spider, sets for BIRD), or, where floats are involved,
    values each within the tolerance of one of the other's."""
    by_values: dict[Any, list[int]] = {}
    for j, sig in enumerate(got):
        by_values.setdefault(_frozen(sig), []).append(j)
    out = []
    for sig in want:
        same = list(by_values.get(_frozen(sig), []))
        if tolerance > 0 and (_has_float(sig) or any(floats_got)):
            mine = sorted(set(sig))
            same += [j for j, other in enumerate(got) if j not in same
                     and (floats_got[j] or _has_float(sig))
                     and _near(sorted(set(other)), mine, tolerance)]
        out.append(sorted(same))
    return out


def _frozen(sig: Signature) -> frozenset[Any]:
    return sig if isinstance(sig, frozenset) else frozenset(sig.items())


def _near(a: list[Any], b: list[Any], tolerance: float) -> bool:
    return _covers(a, b, tolerance) and _covers(b, a, tolerance)


def _covers(values: list[Any], others: list[Any], tolerance: float) -> bool:
    """Every value (a rank key) is within the tolerance of one of `others` (rank keys,
    sorted): its neighbours in order are the closest."""
    import bisect

    for key in values:
        at = bisect.bisect_left(others, key)
        near = others[max(0, at - 1):at + 1]
        if not any(o[0] == key[0] and values_match(o[1], key[1], tolerance) for o in near):
            return False
    return True


def _twins(columns: list[list[Any]]) -> list[int]:
    """For each column, the column before it holding the very same values in every row
    (-1 for none): swapping two such columns changes nothing, so they keep their order."""
    last: dict[tuple[Any, ...], int] = {}
    out = []
    for j, column in enumerate(columns):
        key = tuple(rank(v) for v in column)
        out.append(last.get(key, -1))
        last[key] = j
    return out
