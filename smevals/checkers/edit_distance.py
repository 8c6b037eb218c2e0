"""Levenshtein (edit) distance over code points, with the work bounded.

`levenshtein(a, b)` is exact and bit-parallel (Myers 1999, Hyyrö 2001): one step per
character of one text, on integers with a bit per character of the other.
`within(a, b, k)` is Ukkonen's cut-off: the distance if it is at most `k`, else `k + 1`,
computed along the 2k+1 diagonals nearest the main one (Landau–Vishkin): (k+1)² steps in
Python, each sliding along matching characters by slice comparison in C, so at most
(|a|+|b|)·(2k+1) character comparisons. `bounded` picks between the two."""

from __future__ import annotations

# Exact computation while |longer| × (|shorter| // 1024 + 1) stays under this (about a
# second: 1 MB against 1 KB, or 30 K characters against 30 K).
EXACT_BUDGET = 2_000_000
# The widest band computed for longer texts: (MAX_BAND + 1)² diagonal steps.
MAX_BAND = 500
_NONE = -(1 << 62)


class TooLong(Exception):
    """The texts are too long to tell whether their distance is at most the limit."""


def levenshtein(a: str, b: str) -> int:
    """Edit distance over code points, bit-parallel (Myers / Hyyrö): one text is scanned,
    the other is the bit mask. Scanning the shorter one is quicker when it has few distinct
    characters (a mask per character, built in C); else the longer one is scanned."""
    if len(a) > len(b):
        a, b = b, a
    if not a:
        return len(b)
    kinds = set(a)
    if len(kinds) <= _FEW_KINDS:
        return _scan(a, b, _masks(b, kinds))
    return _scan(b, a, _masks_by_position(a))


_FEW_KINDS = 64


def _masks(text: str, chars: set[str]) -> dict[str, int]:
    """Bit i of mask[c] is set when text[i] is c, for each c of `chars` in `text`."""
    table = dict.fromkeys(map(ord, set(text)), "0")
    out: dict[str, int] = {}
    for char in chars:
        if ord(char) in table:
            table[ord(char)] = "1"
            out[char] = int(text.translate(table)[::-1], 2)
            table[ord(char)] = "0"
    return out


def _masks_by_position(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for i, char in enumerate(text):
        out[char] = out.get(char, 0) | (1 << i)
    return out


def _scan(text: str, pattern: str, peq: dict[str, int]) -> int:
    full, top = (1 << len(pattern)) - 1, 1 << (len(pattern) - 1)
    pv, mv, score = full, 0, len(pattern)
    for char in text:
        eq = peq.get(char, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | (~(xh | pv) & full)
        mh = pv & xh
        score += 1 if ph & top else -1 if mh & top else 0
        ph = ((ph << 1) | 1) & full
        mh = (mh << 1) & full
        pv = mh | (~(xv | ph) & full)
        mv = ph & xv
    return score


def common_run(a: str, i: int, b: str, j: int) -> int:
    """How many characters of a[i:] and b[j:] match from the start (galloping slices)."""
    limit = min(len(a) - i, len(b) - j)
    if limit <= 0 or a[i] != b[j]:
        return 0
    done, step = 0, 16
    while done < limit:
        size = min(step, limit - done)
        if a[i + done:i + done + size] == b[j + done:j + done + size]:
            done, step = done + size, step * 2
            continue
        low, high = done, done + size          # a prefix of `low` matches, of `high` not
        while high - low > 1:
            mid = (low + high) // 2
            if a[i + low:i + mid] == b[j + low:j + mid]:
                low = mid
            else:
                high = mid
        return low
    return done


def trim_common(a: str, b: str) -> tuple[str, str]:
    """Both texts without their common prefix and suffix (the distance is unchanged)."""
    head = common_run(a, 0, b, 0)
    a, b = a[head:], b[head:]
    tail = common_run(a[::-1], 0, b[::-1], 0)
    return a[:len(a) - tail], b[:len(b) - tail]


def within(a: str, b: str, k: int) -> int:
    """The edit distance if it is at most `k`, else `k + 1`."""
    m, n = len(a), len(b)
    if abs(m - n) > k:
        return k + 1
    goal = n - m                                # the diagonal of the cell (m, n)
    rows = {0: common_run(a, 0, b, 0)}          # furthest row reached on each diagonal
    for edits in range(k + 1):
        if rows.get(goal, _NONE) >= m:
            return edits
        rows = _next_rows(a, b, rows, edits + 1)
    return k + 1


def _next_rows(a: str, b: str, rows: dict[int, int], edits: int) -> dict[int, int]:
    m, n = len(a), len(b)
    out: dict[int, int] = {}
    for diag in range(max(-edits, -m), min(edits, n) + 1):
        row = max(rows.get(diag, _NONE) + 1,        # substitution
                  rows.get(diag - 1, _NONE),        # insertion
                  rows.get(diag + 1, _NONE) + 1)    # deletion
        row = min(row, m, n - diag)
        out[diag] = row + common_run(a, row, b, row + diag)
    return out


def bounded(a: str, b: str, k: int) -> int | None:
    """The exact distance, or None when it is more than `k` (not computed further).

    The band comes first when it is cheaper than the exact computation (a near copy of a
    long text is quick to measure); the exact computation runs within EXACT_BUDGET. Raises
    TooLong when the texts are too long for an exact answer, `k` is above MAX_BAND and their
    distance is more than MAX_BAND.
    """
    a, b = trim_common(a, b)
    longer, shorter = max(len(a), len(b)), min(len(a), len(b))
    exact_cost = longer * (shorter // 1024 + 1)
    band = min(k, MAX_BAND)
    found = within(a, b, band) if 4 * (band + 1) ** 2 < exact_cost else None
    if found is not None and found <= band:
        return found
    if exact_cost <= EXACT_BUDGET:
        return levenshtein(a, b)
    found = within(a, b, band) if found is None else found
    if found <= band:
        return found
    if band < k:
        raise TooLong(f"the texts are too long to compare within {k} edits (above "
                      f"{MAX_BAND}, only the exact distance up to {MAX_BAND} is computed "
                      f"for texts this long)")
    return None
