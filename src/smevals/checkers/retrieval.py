"""Retrieval scores from @caveman/evals: context_f1 and localization_f1."""

from __future__ import annotations

from typing import Any

from smevals.checkers.base import (
    UNIT,
    Checker,
    CheckInput,
    CheckResult,
    checker,
    fail,
    one_of_words,
)
from smevals.checkers.edit_distance import within
from smevals.checkers.inputs import input_text, parse_json
from smevals.checkers.locations import Locations, line_iou, parse_locations
from smevals.checkers.overlap import f1

CHECKERS: dict[str, Checker] = {}

MAX_MEMBERS = 64
MAX_LIST_CHARS = 8192
_PINNED_WS = " \t\n\r\f\v"
_STRINGS = {"type": "array", "items": {"type": "string"}, "x-expect": "a list of strings"}


def _normalize(member: str) -> str:
    out = member.lower()
    for char in _PINNED_WS[1:]:
        out = out.replace(char, " ")
    return " ".join(p for p in out.split(" ") if p)


def similar(a: str, b: str, threshold: float) -> bool:
    """1 - distance / longer length >= threshold (two empty strings are identical)."""
    longest = max(len(a), len(b))
    if a == b:
        return True
    budget = (1 - threshold) * longest
    if abs(len(a) - len(b)) > budget:
        return False
    cutoff = int(budget) + 1            # a distance past it fails whatever the rounding
    return 1 - within(a, b, cutoff) / longest >= threshold


def _retrieved(opts: dict[str, Any], inp: CheckInput) -> list[str]:
    if "retrieved" in opts:
        return list(opts["retrieved"])
    _label, text = input_text(opts, inp)
    try:
        value = parse_json(text)
    except ValueError:
        return [line for line in text.splitlines() if line.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    fail("the output is JSON but not a list of strings; give `retrieved`", score=0.0)


def _checked(name: str, members: list[str]) -> list[str]:
    if not members:
        fail(f"{name}: the list is empty", score=0.0 if name == "retrieved" else None)
    if len(members) > MAX_MEMBERS or sum(map(len, members)) > MAX_LIST_CHARS:
        fail(f"{name}: more than {MAX_MEMBERS} members or {MAX_LIST_CHARS} characters")
    normalized = [_normalize(m) for m in members]
    if not any(normalized):
        fail(f"{name}: every member is blank")
    return normalized


@checker(
    CHECKERS,
    "context_f1",
    "Precision/recall/F1 of retrieved passages against expected ones (fuzzy matching).",
    properties={
        "retrieved": _STRINGS,
        "expected": _STRINGS,
        "measure": one_of_words("precision", "recall", "f1"),
        "similarity_threshold": UNIT,
        "threshold": UNIT,
    },
    required=("expected",),
    task_keys={"expected": ("context",)},
)
def context_f1(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    expected = _checked("expected", list(opts["expected"]))
    retrieved = _checked("retrieved", _retrieved(opts, inp))
    sim = opts.get("similarity_threshold", 0.7)
    hits = [any(similar(r, e, sim) for e in expected) for r in retrieved]
    found = [any(similar(r, e, sim) for r in retrieved) for e in expected]
    precision, recall = sum(hits) / len(retrieved), sum(found) / len(expected)
    scores = {"precision": precision, "recall": recall, "f1": f1(precision, recall)}
    measure = opts.get("measure", "f1")
    score, threshold = scores[measure], opts.get("threshold", 0.5)
    ok = score >= threshold
    return CheckResult(
        ok=ok,
        score=score,
        notes="" if ok else f"context {measure} {score:.4f} is below the threshold {threshold:g}",
        details={"missed_expected": [i for i, f in enumerate(found) if not f]} if not ok else {},
        metrics={f"context_{k}": v for k, v in scores.items()},
    )


_LOCATIONS = {
    "type": ["string", "array", "object"],
    "x-expect": "`path:start-end` lines, a list of locations or a map of files to ranges",
}


@checker(
    CHECKERS,
    "localization_f1",
    "File-set F1 and line-range overlap (IoU) of cited code locations against gold ones.",
    properties={
        "reference": _LOCATIONS,
        "threshold": UNIT,
        "file_threshold": UNIT,
        "line_threshold": UNIT,
    },
    required=("reference",),
    task_keys={"reference": ("reference", "expected")},
)
def localization_f1(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    gold = parse_locations(opts["reference"], "reference")
    label, text = input_text(opts, inp)
    cited = parse_locations(_loose_json(text), label, score=0.0)
    file_f1, line = _file_f1(cited, gold), line_iou(cited, gold)
    threshold = opts.get("threshold", 0.5)
    file_min = opts.get("file_threshold", threshold)
    line_min = opts.get("line_threshold", threshold)
    ok = file_f1 > 0 and line > 0 and file_f1 >= file_min and line >= line_min
    notes = f"file F1 {file_f1:.4f} (needs {file_min:g}), line IoU {line:.4f} (needs {line_min:g})"
    return CheckResult(
        ok=ok,
        score=f1(file_f1, line),
        notes="" if ok else notes,
        details=_missing_files(cited, gold) if not ok else {},
        metrics={"file_f1": file_f1, "line_iou": line},
    )


def _missing_files(cited: Locations, gold: Locations) -> dict[str, Any]:
    missing = sorted(set(gold) - set(cited))
    return {"missing_files": missing} if missing else {}


def _loose_json(text: str) -> object:
    stripped = text.strip()
    if stripped[:1] in ("[", "{"):
        try:
            return parse_json(stripped)
        except ValueError:
            pass
    return text


def _file_f1(cited: Locations, gold: Locations) -> float:
    shared = len(set(cited) & set(gold))
    return f1(shared / len(cited), shared / len(gold)) if shared else 0.0
