"""Sentence BLEU, two ways: sacrebleu's `sentence_bleu` with its defaults, and the figure
of @caveman/evals' `bleu_score` (kept for users who need their old numbers).

sacrebleu's defaults: the 13a tokenizer of WMT's mteval-v13a (case kept), n-grams up to 4,
'exp' smoothing (the k-th order without a match counts as 1 / (2^k * total)), effective
order (orders the hypothesis is too short for are left out), no score at all without a
single matching unigram, and the brevity penalty against the reference closest in length
(the shorter on a tie). Several references: an n-gram counts up to its highest count in
any one reference. Written from that description; tests compare it with sacrebleu.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

MAX_ORDER = 4

# mteval-v13a: these ASCII symbols always stand alone; a period or comma stands alone
# unless a digit is on both sides; a dash stands alone after a digit.
_ALONE = str.maketrans({char: f" {char} " for char in "!\"#$%&()*+/:;<=>?@[\\]^_`{|}~"})
_STOP_AFTER_NON_DIGIT = re.compile(r"([^0-9])([.,])")
_STOP_BEFORE_NON_DIGIT = re.compile(r"([.,])([^0-9])")
_DASH_AFTER_DIGIT = re.compile(r"([0-9])(-)")
_ENTITIES = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))


def tokens_13a(text: str) -> list[str]:
    """The 13a tokens of `text`, as sacrebleu's default tokenizer splits it."""
    line = text.rstrip().replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        for entity, char in _ENTITIES:
            line = line.replace(entity, char)
    line = f" {line} ".translate(_ALONE)
    line = _STOP_AFTER_NON_DIGIT.sub(r"\1 \2 ", line)
    line = _STOP_BEFORE_NON_DIGIT.sub(r" \1 \2", line)
    return _DASH_AFTER_DIGIT.sub(r"\1 \2 ", line).split()


def all_ngrams(tokens: Sequence[str]) -> Counter[tuple[str, ...]]:
    """Every n-gram of order 1 to MAX_ORDER, counted."""
    counts: Counter[tuple[str, ...]] = Counter()
    for n in range(1, MAX_ORDER + 1):
        counts.update(_order(tokens, n))
    return counts


def closest_length(length: int, lengths: Sequence[int]) -> int:
    """The reference length nearest `length`; the shorter of two equally near."""
    return min(lengths, key=lambda ref: (abs(ref - length), ref))


def sacrebleu_sentence(hyp: Sequence[str], refs: Sequence[Sequence[str]]) -> float:
    """sacrebleu's `sentence_bleu(hyp, refs).score / 100` on already tokenized text."""
    best: Counter[tuple[str, ...]] = Counter()
    for ref in refs:
        best |= all_ngrams(ref)
    correct, total = [0] * MAX_ORDER, [0] * MAX_ORDER
    for gram, count in all_ngrams(hyp).items():
        total[len(gram) - 1] += count
        correct[len(gram) - 1] += min(count, best[gram])
    if not any(correct):
        return 0.0
    ref_len = closest_length(len(hyp), [len(ref) for ref in refs])
    penalty = 1.0 if len(hyp) >= ref_len else math.exp(1 - ref_len / len(hyp))
    logs, unmatched = [], 0
    for hits, count in zip(correct, total, strict=True):
        if count == 0:
            break
        if hits == 0:
            unmatched += 1
        logs.append(math.log(hits / count if hits else 1 / (2**unmatched * count)))
    return penalty * math.exp(sum(logs) / len(logs))


def caveman_sentence(cand: Sequence[str], ref: Sequence[str]) -> float:
    """@caveman/evals' `bleu_score`: orders up to min(4, both lengths), an order without a
    match counts as 1 / (2 * total), brevity penalty; on its own pinned tokens."""
    orders = min(MAX_ORDER, len(cand), len(ref))
    logs = []
    for n in range(1, orders + 1):
        count = len(cand) - n + 1
        hits = sum((_order(cand, n) & _order(ref, n)).values())
        logs.append(math.log(hits / count if hits else 1 / (2 * count)))
    penalty = 1.0 if len(cand) >= len(ref) else math.exp(1 - len(ref) / len(cand))
    return penalty * math.exp(sum(logs) / len(logs))


def _order(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    """The n-grams of `tokens`, counted."""
    return Counter(zip(*(tokens[i:] for i in range(n)), strict=False))
