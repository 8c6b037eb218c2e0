"""`data/<eval>/search.js`: the index the Eval page's search reads, built with the site, over
the whole of each Run's output.txt (not only the start that explore.js keeps to show).

Each output is cut into words (runs of letters, digits and `_`, lower-cased, each kept to
its first WORD_CHARS characters), and the index maps each word to the Runs whose output
holds it, as positions in explore.js's list of Runs (same order). A search then matches
the Runs whose output holds, for every word of the search, a word that contains it (so
`pari` finds `Paris`, as a plain text search of the output would), or whose Task name
contains the search. The index is loaded only when a search is typed.

The Runs of a word are written in the smaller of two forms: the gaps between their
positions less one, in base 36, comma-separated (`"3,0,9"`: Runs 3, 4 and 14), or, for a
word many Runs hold, a bitmap in base64 after a `~` (bit i % 8 of byte i // 8 for position
i), whichever is shorter.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from smevals.site.data import FORMAT

WORD = re.compile(r"\w+")
WORD_CHARS = 64             # a longer word is indexed by its first 64 characters
OUTPUT_BYTES = 10 << 20     # the most of one output.txt indexed (a runner's default cap)
DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def words_of(text: str) -> set[str]:
    """The distinct words of `text`, lower-cased and cut to WORD_CHARS characters."""
    return {w[:WORD_CHARS] for w in WORD.findall(text.lower())}


class Index:
    """Filled with each Run's output in explore.js's order, then written as a document."""

    def __init__(self) -> None:
        self.runs = 0
        self.cut = 0                    # outputs longer than OUTPUT_BYTES (indexed in part)
        self.postings: dict[str, list[int]] = {}

    def add(self, text: str, cut: bool = False) -> None:
        position = self.runs
        self.runs += 1
        self.cut += cut
        for word in words_of(text):
            self.postings.setdefault(word, []).append(position)

    def doc(self, slug: str) -> dict[str, Any]:
        words = {w: encode(p, self.runs) for w, p in sorted(self.postings.items())}
        return {"format": FORMAT, "kind": "search", "eval": slug, "runs": self.runs,
                "word_chars": WORD_CHARS, "output_bytes": OUTPUT_BYTES, "cut": self.cut,
                "words": words}


def encode(positions: list[int], runs: int) -> str:
    """`positions` (ascending) as gaps in base 36, or as a bitmap when that is shorter."""
    gaps, last = [], -1
    for at in positions:
        gaps.append(_base36(at - last - 1))
        last = at
    listed = ",".join(gaps)
    if len(listed) <= runs // 6:        # a bitmap takes about runs / 6 characters
        return listed
    bits = bytearray((runs + 7) // 8)
    for at in positions:
        bits[at >> 3] |= 1 << (at & 7)
    packed = "~" + base64.b64encode(bytes(bits)).decode("ascii")
    return packed if len(packed) < len(listed) else listed


def decode(value: str, runs: int) -> list[int]:
    """The positions `encode` wrote (what search.js does, for the tests)."""
    if value.startswith("~"):
        bits = base64.b64decode(value[1:])
        return [i for i in range(runs) if bits[i >> 3] >> (i & 7) & 1]
    out, last = [], -1
    for gap in filter(None, value.split(",")):
        last += int(gap, 36) + 1
        out.append(last)
    return out


def _base36(n: int) -> str:
    if n < 36:
        return DIGITS[n]
    out = ""
    while n:
        n, digit = divmod(n, 36)
        out = DIGITS[digit] + out
    return out
