"""Levenshtein (edit) distance over code points, with the work bounded.

The distances come from rapidfuzz (bit-parallel, in C++): `levenshtein(a, b)` is exact;
`within(a, b, k)` is the distance if it is at most `k`, else `k + 1`, computed with
rapidfuzz's score cut-off (only a band of 2k+1 diagonals). `bounded` decides how much of
that work a check may do. rapidfuzz loads on the first comparison (it costs start-up time)."""

from __future__ import annotations

# Exact computation while |longer| × (|shorter| // 1024 + 1) stays under this (a fraction of
# a second: 1 MB against 1 KB, or 30 K characters against 30 K).
EXACT_BUDGET = 2_000_000
# The widest band computed for longer texts (the distance up to MAX_BAND).
MAX_BAND = 500


class TooLong(Exception):
    """The texts are too long to tell whether their distance is at most the limit."""


def levenshtein(a: str, b: str) -> int:
    """Edit distance over code points."""
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(a, b))


def within(a: str, b: str, k: int) -> int:
    """The edit distance if it is at most `k`, else `k + 1`."""
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(a, b, score_cutoff=k))


def trim_common(a: str, b: str) -> tuple[str, str]:
    """Both texts without their common prefix and suffix (the distance is unchanged)."""
    from rapidfuzz.distance import Postfix, Prefix

    head = int(Prefix.similarity(a, b))
    a, b = a[head:], b[head:]
    tail = int(Postfix.similarity(a, b))
    return a[:len(a) - tail], b[:len(b) - tail]


def bounded(a: str, b: str, k: int) -> int | None:
    """The exact distance, or None when it is more than `k` (not computed further).

    The band of `k` edits (MAX_BAND at most) comes first, as it is cheap; a distance past it
    is computed exactly within EXACT_BUDGET. Raises TooLong when the texts are too long for
    an exact answer, `k` is above MAX_BAND and their distance is more than MAX_BAND.
    """
    a, b = trim_common(a, b)
    band = min(k, MAX_BAND)
    found = within(a, b, band)
    if found <= band:
        return found
    longer, shorter = max(len(a), len(b)), min(len(a), len(b))
    if longer * (shorter // 1024 + 1) <= EXACT_BUDGET:
        return levenshtein(a, b)
    if band < k:
        raise TooLong(f"the texts are too long to compare within {k} edits (above "
                      f"{MAX_BAND}, only the exact distance up to {MAX_BAND} is computed "
                      f"for texts this long)")
    return None
