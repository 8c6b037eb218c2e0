"""Inspect's text scorers, as inspect_ai 0.3.285 defines them: inspect_match (`match()`),
inspect_exact (`exact()`) and inspect_choice (`choice()` after the `multiple_choice()`
solver). Each takes the Task's target (a string or a list: any one of them is enough).
Inspect's `includes()` is `contains` with `any: true` and `casefold: true`.

Written from the definitions, not copied: what is kept and what differs is in
docs/migrating.md (Coming from Inspect). One difference: with `numeric: true`, a number is
what Python's float() reads (or one numeric character such as `½`); Inspect 0.3.285 also
reads vulgar fractions after digits (`2½`), superscript exponents and Chinese numerals.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from typing import Any

from smevals.checkers.base import (
    BOOL,
    Checker,
    CheckInput,
    CheckResult,
    binary,
    checker,
    fail,
    one_of_words,
)
from smevals.checkers.inputs import input_text

CHECKERS: dict[str, Checker] = {}

_TARGET = {
    "anyOf": [{"type": ["string", "number"]},
              {"type": "array", "minItems": 1, "items": {"type": ["string", "number"]}}],
    "x-expect": "a string, or a non-empty list of strings",
}


def _targets(opts: dict[str, Any]) -> list[str]:
    value = opts["target"]
    items = value if isinstance(value, list) else [value]
    return [v if isinstance(v, str) else str(v) for v in items]


# --- match() ---------------------------------------------------------------------------

_TRIM = "!?:;()[]{}'\"`"        # what is trimmed from a word before it is read as a number


def _strip_punctuation(text: str) -> str:
    return text.strip(string.whitespace + string.punctuation)


def _strip_numeric(text: str) -> str:
    """Currency signs, commas and the markdown marks `*` and `_` dropped (a backslash before
    one of them too), and a `.` not followed by a digit."""
    text = re.sub(r"\\([$,£€*_])", r"\1", text)
    text = re.sub(r"[$,£€*_]", "", text)
    return re.sub(r"\.(?=\s|$|\D)", "", text)


def _number(text: str, trim: bool = True) -> float | None:
    """`text` read as one finite number (enclosing punctuation trimmed unless `trim` is
    False), else None."""
    word = text.strip(_TRIM) if trim else text
    value: float | None
    try:
        value = float(word)
    except ValueError:
        value = _one_char(word)
    return value if value is not None and math.isfinite(value) else None


def _one_char(word: str) -> float | None:
    word = word.strip()
    sign = 1.0
    while word[:1] in ("-", "+", "\u2212"):
        sign, word = (-sign if word[0] != "+" else sign), word[1:].lstrip()
    if len(word) != 1:
        return None
    try:
        return sign * float(unicodedata.numeric(word))
    except (TypeError, ValueError):
        return None


def _normal(text: str, trim: bool = True) -> str:
    value = _number(text, trim)
    return text if value is None else format(value, ".5g")


def _first_number(words: list[str]) -> str:
    found = next((w for w in words if _number(w) is not None), None)
    return "" if found is None else _normal(found)


def match_text(value: str, target: str, location: str, ignore_case: bool,
               numeric: bool) -> bool:
    """Whether `value` matches `target` as Inspect's match() decides."""
    v, t = value.strip(), target.strip()
    if ignore_case:
        v, t = v.casefold(), t.casefold()
    if numeric:
        t = _strip_numeric(t)
    if numeric and _number(t) is not None:
        v, t = _strip_numeric(v), _normal(t)
        words = re.split(r"\s+", v)
        if location == "begin":
            return _first_number(words) == t
        if location == "end":
            return _first_number(words[::-1]) == t
        if location == "exact":
            return _normal(v, trim=False) == t
        return any(_normal(w) == t for w in words if _number(w) is not None)
    v, t = _strip_punctuation(v), _strip_punctuation(t)
    if location == "begin":
        return v.startswith(t)
    if location == "end":
        return v.endswith(t)
    if location == "exact":
        return v == t
    return t in v


@checker(
    CHECKERS,
    "inspect_match",
    "The output matches a target at its end (or begin, anywhere, exactly), as Inspect's "
    "match() scorer: case and outer punctuation ignored; numeric: numbers compared by value.",
    properties={"target": _TARGET, "location": one_of_words("begin", "end", "any", "exact"),
                "ignore_case": BOOL, "numeric": BOOL},
    required=("target",),
    task_keys={"target": ("expected", "target")},
)
def inspect_match(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    targets = _targets(opts)
    where = opts.get("location", "end")
    ok = any(match_text(text, t, where, opts.get("ignore_case", True),
                        opts.get("numeric", False)) for t in targets)
    return binary(ok, f"{label} does not match {_shown(targets)} ({where})")


def _shown(targets: list[str]) -> str:
    return " or ".join(repr(t[:60]) for t in targets[:5])


# --- exact() ---------------------------------------------------------------------------


DIGIT = re.compile(r"\d")


def _finite(text: str) -> bool:
    if DIGIT.search(text) is None:      # float() reads no finite number without a digit
        return False
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


ARTICLES = re.compile(r"\b(a|an|the)\b")
PUNCTUATION = str.maketrans("", "", string.punctuation)


def _token(token: str) -> str:
    token = token.casefold()
    if not _finite(token):
        stripped = _strip_punctuation(token)
        token = stripped if _finite(stripped) else token.translate(PUNCTUATION)
    if _finite(token):
        token = str(float(token))
    if token.isalnum():                 # one word: an article, or itself
        return "" if token in ("a", "an", "the") else token
    return " ".join(ARTICLES.sub(" ", token).split())


def normalized(text: str) -> str:
    """Inspect's exact() normal form: words (split at spaces and `-`) case-folded, without
    punctuation (a number keeps its own), numbers as floats, no articles."""
    tokens = [_token(t) for t in re.split(" |-", text)]
    return " ".join(t for t in tokens if t.strip()).strip()


@checker(
    CHECKERS,
    "inspect_exact",
    "The output equals a target after Inspect's exact() normalising (case, punctuation, "
    "articles, white space, numbers as floats).",
    properties={"target": _TARGET},
    required=("target",),
    task_keys={"target": ("expected", "target")},
)
def inspect_exact(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    got = normalized(text)
    targets = _targets(opts)
    ok = any(n and n == got for n in map(normalized, targets))
    return binary(ok, f"{label} does not equal {_shown(targets)} (normalised)",
                  got=got[:200])


# --- choice() --------------------------------------------------------------------------


def letter(index: int) -> str:
    """A, B, ... Z, then 1, 2, ... (Inspect's answer letters)."""
    return chr(ord("A") + index) if index < 26 else str(index - 25)


def letter_index(text: str) -> int:
    if len(text) == 1 and text.isalpha():
        return ord(text.upper()) - ord("A")
    if text.isnumeric() and int(text) > 0:
        return 25 + int(text)
    raise ValueError(f"{text!r} is not an answer letter")


def answered(completion: str, count: int, multiple: bool) -> set[str]:
    """The letters a completion answers (`ANSWER: B`), as Inspect's multiple_choice()
    reads them; none when it does not answer in that form."""
    text = re.sub(r"\$\s*([A-Za-z\d][A-Za-z\d ,]*?)\s*\$", r"\1", completion)
    text = re.sub(r"\*\*\s*([A-Za-z\d][A-Za-z\d ,]*?)\s*\*\*", r"\1", text)
    text = re.sub(r"(?i)(^|[:,])(\s*)\(([A-Za-z\d])\)(?=\s*(?:,|\.|\n|\Z))", r"\1\2\3", text)
    found = re.findall(r"(?i)^ANSWER\s*:\s*([A-Za-z\d ,]+)\s*(?:$|\n|\.)", text, re.M) or \
        re.findall(r"(?i)ANSWER\s*:\s*([A-Za-z\d ,]+)(?:[^\w]|\n|$|\.)", text)
    if not found:
        return set()
    given = found[-1].strip().rstrip(".").upper()
    allowed = {letter(i) for i in range(count)}
    if multiple:
        given = given.replace(" AND ", ",").replace(" ", "")
        parts = {p for p in given.split(",") if p}
        if parts <= allowed:
            return parts
        return set(given) if set(given) <= allowed else set()
    tokens = [p for p in given.split(",") if p]
    return {tokens[0]} if len(tokens) == 1 and tokens[0] in allowed else set()


def _target_positions(targets: list[str], count: int) -> list[int]:
    letters: list[str] = []
    for value in targets:
        for token in value.replace(",", " ").split():
            letters += [token] if token.isnumeric() else list(token)
    try:
        positions = [letter_index(t) for t in letters]
    except ValueError as exc:
        fail(f"the target {exc}")
    beyond = [t for t, p in zip(letters, positions, strict=True) if p >= count]
    if beyond:
        fail(f"the target names answer(s) beyond the {count} choices: {', '.join(beyond)}")
    return positions


@checker(
    CHECKERS,
    "inspect_choice",
    "The output's `ANSWER: X` names exactly the target's choice letters, as Inspect's "
    "choice() scorer reads what multiple_choice() asked for.",
    properties={"target": _TARGET, "choices": {
        "anyOf": [{"type": "integer", "minimum": 1}, {"type": "array", "minItems": 1}],
        "x-expect": "the list of choices (or how many there are)"},
        "multiple_correct": BOOL},
    required=("target", "choices"),
    task_keys={"target": ("expected", "target"), "choices": ("choices",)},
)
def inspect_choice(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    choices = opts["choices"]
    count = len(choices) if isinstance(choices, list) else int(choices)
    targets = _targets(opts)
    wanted = sorted(_target_positions(targets, count))
    given = answered(text, count, bool(opts.get("multiple_correct", False)))
    chosen = sorted(letter_index(g) for g in given)
    if chosen == wanted:
        return CheckResult(ok=True, score=1.0)
    why = "no answer" if not text.strip() else f"answer {', '.join(sorted(given))}" if given \
        else "no `ANSWER: X` line"
    return binary(False, f"{label}: {why}; the target is {', '.join(letter(p) for p in wanted)}",
                  answer=sorted(given))
