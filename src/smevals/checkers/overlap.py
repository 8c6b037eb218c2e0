"""Overlap scores: token_f1, citation_coverage (ai-eval-forge), bleu (sacrebleu, or
@caveman/evals with `variant: caveman`) and rouge (@caveman/evals).

The pinned tokenisers and the LCS are plain string and integer operations (no regex).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

from smevals.checkers.base import (
    NONEMPTY,
    UNIT,
    Checker,
    CheckInput,
    CheckResult,
    checker,
    fail,
    one_of_words,
)
from smevals.checkers.inputs import input_text, value_text
from smevals.checkers.sentence_bleu import caveman_sentence, sacrebleu_sentence, tokens_13a

CHECKERS: dict[str, Checker] = {}

MAX_TOKENS = 65536
_PINNED_WS = " \t\n\r\f\v"
_ASCII_ALNUM = bytes(c if (0x30 <= c <= 0x39 or 0x61 <= c <= 0x7A) else 0x20 for c in range(256))


def word_tokens(text: str) -> list[bytes]:
    """ai-eval-forge tokens: runs of ASCII [a-z0-9] after lowercasing."""
    return text.lower().encode("ascii", "replace").translate(_ASCII_ALNUM).split()


class _Spacer(dict[int, str]):
    """str.translate table: pinned whitespace -> space, [a-z0-9] kept, others isolated."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if char in _PINNED_WS:
            value = " "
        elif char.isascii() and char.isalnum():
            value = char
        else:
            value = f" {char} "
        self[code] = value
        return value


_SPACER = _Spacer()


def pinned_tokens(text: str) -> list[str]:
    """@caveman/evals tokens: [a-z0-9] runs, every other non-space code point alone."""
    return [t for t in text.lower().translate(_SPACER).split(" ") if t]


def f1(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def _verdict(score: float, threshold: float, what: str, **metrics: float) -> CheckResult:
    ok = score >= threshold
    notes = "" if ok else f"{what} {score:.4f} is below the threshold {threshold:g}"
    return CheckResult(ok=ok, score=score, notes=notes, metrics=dict(metrics))


@checker(
    CHECKERS,
    "token_f1",
    "Multiset F1 of [a-z0-9] tokens against the expected text.",
    properties={"value": {"not": {"type": "null"}, "x-expect": "a value"}, "threshold": UNIT},
    required=("value",),
    task_keys={"value": ("expected",)},
)
def token_f1(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    _label, text = input_text(opts, inp)
    expected = word_tokens(value_text(opts["value"]))
    if not expected:
        fail("the expected value has no tokens (letters or digits) to compare")
    got = word_tokens(text)
    overlap = sum((Counter(got) & Counter(expected)).values())
    precision = overlap / len(got) if got else 0.0
    recall = overlap / len(expected)
    score = f1(precision, recall)
    return _verdict(score, opts.get("threshold", 1.0), "token F1", token_f1=score)


_SOURCE = {
    "anyOf": [
        {"type": ["string", "number"]},
        {
            "type": "object",
            "required": ["id"],
            "properties": {"id": {"type": ["string", "number"]}},
        },
    ],
    "x-expect": "a source id or an object with an id",
}


@checker(
    CHECKERS,
    "citation_coverage",
    "Share of source ids cited in the output (whole-id matches).",
    properties={
        "sources": {
            "type": "array",
            "minItems": 1,
            "items": _SOURCE,
            "x-expect": "a list of sources",
        },
        "threshold": UNIT,
    },
    required=("sources",),
    task_keys={"sources": ("sources",)},
)
def citation_coverage(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    ids = list(dict.fromkeys(i for i in map(_source_id, opts["sources"]) if i))
    if not ids:
        fail("sources: no non-blank source ids")
    missing = [i for i in ids if not has_bounded(text, i)]
    cited = len(ids) - len(missing)
    score = cited / len(ids)
    ok = score >= opts.get("threshold", 1.0)
    notes = f"{label} cites {cited}/{len(ids)} sources; missing " + ", ".join(
        repr(m) for m in missing[:5]
    )
    return CheckResult(
        ok=ok,
        score=score,
        notes="" if ok else notes,
        details={"missing": missing} if missing else {},
        metrics={"citation_coverage": score},
    )


def _source_id(source: object) -> str:
    raw = source.get("id") if isinstance(source, dict) else source
    if isinstance(raw, float) and raw.is_integer():
        raw = int(raw)
    return str(raw).strip()


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def has_bounded(text: str, needle: str) -> bool:
    """`needle` occurs with no letter, digit or underscore right before or after."""
    start = text.find(needle)
    while start >= 0:
        end = start + len(needle)
        before_ok = start == 0 or not _is_word(text[start - 1]) or not _is_word(needle[0])
        after_ok = end == len(text) or not _is_word(text[end]) or not _is_word(needle[-1])
        if before_ok and after_ok:
            return True
        start = text.find(needle, start + 1)
    return False


def _two_sides(opts: dict[str, Any], inp: CheckInput) -> tuple[list[str], list[str]]:
    reference = opts["reference"]
    if not reference.strip():
        fail("option 'reference': must not be blank")
    _label, text = input_text(opts, inp)
    cand, ref = pinned_tokens(text), pinned_tokens(reference)
    if len(cand) > MAX_TOKENS or len(ref) > MAX_TOKENS:
        fail(f"input exceeds the size cap of {MAX_TOKENS} tokens")
    if not ref:
        fail("the reference has no tokens")
    if not cand:
        fail("the output has no tokens", score=0.0)
    return cand, ref


def ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


_REFERENCE = {**NONEMPTY, "x-expect": "a non-empty reference text"}
_REFERENCES = {
    "anyOf": [NONEMPTY, {"type": "array", "minItems": 1, "items": NONEMPTY}],
    "x-expect": "a non-empty reference text or a non-empty list of them",
}


def _bleu_problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    """Blank references; more than one with `variant: caveman` (static, and at grade time)."""
    refs = opts.get("reference")
    if isinstance(refs, str):
        return [] if refs.strip() else [("reference", "must not be blank")]
    if not isinstance(refs, list):
        return []
    if opts.get("variant") == "caveman" and len(refs) > 1:
        return [("reference", f"variant caveman takes one reference, not {len(refs)}")]
    return [(f"reference.{i}", "must not be blank") for i, ref in enumerate(refs)
            if isinstance(ref, str) and not ref.strip()]


@checker(
    CHECKERS,
    "bleu",
    "Sentence BLEU against one or more references, as sacrebleu's sentence_bleu computes it "
    "(`variant: caveman`: @caveman/evals' figure).",
    properties={
        "reference": _REFERENCES,
        "variant": one_of_words("sacrebleu", "caveman"),
        "threshold": UNIT,
    },
    required=("reference",),
    task_keys={"reference": ("reference", "expected")},
    problems=_bleu_problems,
)
def bleu(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    refs = opts["reference"]
    refs = [refs] if isinstance(refs, str) else list(refs)
    if opts.get("variant", "sacrebleu") == "caveman":
        score = caveman_sentence(*_two_sides({**opts, "reference": refs[0]}, inp))
    else:
        score = _sacrebleu(refs, opts, inp)
    return _verdict(score, opts.get("threshold", 0.5), "BLEU", bleu=score)


def _sacrebleu(refs: list[str], opts: dict[str, Any], inp: CheckInput) -> float:
    ref_tokens = [tokens_13a(ref) for ref in refs]
    _label, text = input_text(opts, inp)
    hyp = tokens_13a(text)
    if max(len(hyp), *map(len, ref_tokens)) > MAX_TOKENS:
        fail(f"input exceeds the size cap of {MAX_TOKENS} tokens")
    if not all(ref_tokens):
        fail("the reference has no tokens")
    if not hyp:
        fail("the output has no tokens", score=0.0)
    return sacrebleu_sentence(hyp, ref_tokens)


def lcs_length(a: Sequence[Hashable], b: Sequence[Hashable]) -> int:
    """Longest common subsequence length, bit-parallel (Allison-Dix / Hyyrö)."""
    if not a or not b:
        return 0
    masks: dict[Hashable, int] = {}
    for i, token in enumerate(b):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(b)) - 1
    row = full
    for token in a:
        matches = row & masks.get(token, 0)
        row = ((row + matches) | (row - matches)) & full
    return len(b) - row.bit_count()


def rouge_scores(cand: Sequence[str], ref: Sequence[str], kind: str) -> tuple[float, float, float]:
    """(precision, recall, fmeasure) for rouge_1, rouge_2 or rouge_l."""
    if kind == "rouge_l":
        overlap, c_total, r_total = lcs_length(cand, ref), len(cand), len(ref)
    else:
        n = 2 if kind == "rouge_2" else 1
        overlap = sum((ngrams(cand, n) & ngrams(ref, n)).values())
        c_total, r_total = len(cand) - n + 1, len(ref) - n + 1
    precision = overlap / c_total if c_total > 0 else 0.0
    recall = overlap / r_total if r_total > 0 else 0.0
    return precision, recall, f1(precision, recall)


@checker(
    CHECKERS,
    "rouge",
    "ROUGE-1, ROUGE-2 or ROUGE-L precision, recall or F-measure against a reference.",
    properties={
        "reference": _REFERENCE,
        "rouge_type": one_of_words("rouge_1", "rouge_2", "rouge_l"),
        "measure": one_of_words("precision", "recall", "fmeasure"),
        "threshold": UNIT,
    },
    required=("reference",),
    task_keys={"reference": ("reference", "expected")},
)
def rouge(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    cand, ref = _two_sides(opts, inp)
    kind = opts.get("rouge_type", "rouge_1")
    if kind == "rouge_2" and len(ref) < 2:
        fail("the reference is too short for rouge_2 (needs two tokens)")
    precision, recall, fmeasure = rouge_scores(cand, ref, kind)
    measure = opts.get("measure", "fmeasure")
    score = {"precision": precision, "recall": recall, "fmeasure": fmeasure}[measure]
    metrics = {f"{kind}_precision": precision, f"{kind}_recall": recall, f"{kind}_f": fmeasure}
    return _verdict(score, opts.get("threshold", 0.5), f"{kind} {measure}", **metrics)
