"""promptfoo assertions → smevals Checks, and how faithfully each keeps its meaning.

`check_for(type, value, threshold)` gives a Mapped: the Check's options (with `VALUE` where
the assertion's value goes: a literal for `defaultTest`, `{task: KEY}` for a test's own),
the value to store, and whether the Check decides exactly as promptfoo 0.121 does
(`EXACT`), decides by another rule (`APPROXIMATE`, with the reason), or has no counterpart
(`options` None, with the reason).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from smevals.checkers.strict import js_text
from smevals.importers.pf_regex import js_to_re2

VALUE = object()      # stands for the assertion's value in an options template
MISSING = object()    # an assertion without `value`

EXACT, APPROXIMATE = "exact", "approximate"


@dataclass
class Mapped:
    options: dict[str, Any] | None
    why: str = ""            # no counterpart: why; approximate: how it differs
    value: Any = None
    fidelity: str = EXACT
    files: dict[str, str] = field(default_factory=dict)     # files the Check reads


Maker = Callable[[Any, Any], Mapped]    # an assertion's value and threshold -> its Check


def none(why: str) -> Mapped:
    return Mapped(None, why)


NO_COUNTERPART = {
    "webhook": "calls a webhook with promptfoo's payload: see custom_webhook in the judges "
               "docs to port it by hand",
    "similar": "embedding similarity: no built-in counterpart",
    "select-best": "compares every provider's output at once: no built-in counterpart "
                   "(llm_pairwise compares with one named reference model)",
    "is-valid-openai-tools-call": "no built-in validates tool calls against the provider's "
                                  "tool schemas (tool_called checks names only)",
    "is-valid-openai-function-call": "no built-in validates function calls against the "
                                     "provider's function schemas",
    "assert-set": "a set of assertions with its own threshold has no counterpart",
}
JUDGED = ("a judge Check: its verdict is the judge model's, with smevals' judge prompt, not "
          "promptfoo's grading prompt")


def check_for(kind: str, value: object, threshold: object) -> Mapped:
    negate = kind.startswith("not-")
    base = kind[4:] if negate else kind
    if base in NO_COUNTERPART:
        return none(NO_COUNTERPART[base])
    make = (_NOT if negate else _PLAIN).get(base)
    if make is None:
        if negate and base in _PLAIN:
            return none(f"no built-in checks the opposite of {base}")
        return none("unknown assertion type: no counterpart")
    return make(value, threshold)


def _scalar(value: object) -> bool:
    return isinstance(value, str | int | float) and not (isinstance(value, float) and
                                                          not math.isfinite(value))


def split_values(text: str) -> list[str]:
    """A contains-any/contains-all string as promptfoo splits it: at commas, white space
    around unquoted items trimmed, "double quotes" keeping commas (`\\"` and `""` inside)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and (text[i].isspace() or text[i] == ","):
            i += 1
        if i >= n:
            break
        if text[i] == '"':
            field, i = _quoted(text, i + 1)
            while i < n and text[i].isspace():
                i += 1
            if i < n and text[i] != ",":
                raise ValueError("a quoted item is not followed by a comma")
        else:
            end = text.find(",", i)
            end = n if end < 0 else end
            field, i = text[i:end].strip(), end
        out.append(field)
    return out


def _quoted(text: str, i: int) -> tuple[str, int]:
    field = ""
    while i < len(text):
        pair = text[i:i + 2]
        if pair in ('\\"', "\\\\", '""'):
            field, i = field + pair[1], i + 2
        elif text[i] == '"':
            return field, i + 1
        else:
            field, i = field + text[i], i + 1
    raise ValueError("an unterminated quoted item")


def _items(value: object) -> list[str] | None:
    """The strings a list assertion checks (a string: split as promptfoo splits it)."""
    if isinstance(value, str):
        try:
            value = split_values(value)
        except ValueError:
            return None
    if isinstance(value, list) and all(_scalar(v) for v in value):
        return [js_text(v) for v in value]
    return None


def _equals(negate: bool) -> Maker:
    def make(value: object, threshold: object) -> Mapped:
        if value is MISSING:
            return none("equals without a value")
        opts: dict[str, Any] = {"checker": "equals", "value": VALUE}
        if negate:
            opts["negate"] = True
        return Mapped(opts, value=value)
    return make


def _contains(case: bool, negate: bool = False) -> Maker:
    def make(value: object, threshold: object) -> Mapped:
        if not _scalar(value) or js_text(value) == "":
            return none("needs a non-empty string or number value")
        if negate:
            return Mapped({"checker": "not_contains", "fragments": VALUE,
                           "case_sensitive": case}, value=[js_text(value)])
        return Mapped({"checker": "contains", "value": VALUE, "case_sensitive": case},
                      value=js_text(value))
    return make


def _listed(case: bool, mode: str) -> Maker:
    """contains-any (`any`), contains-all (`all`), not-contains-any (`none`)."""
    def make(value: object, threshold: object) -> Mapped:
        items = _items(value)
        if not items or any(i == "" for i in items):
            return none("needs a non-empty list of non-empty strings")
        if mode == "none":
            return Mapped({"checker": "not_contains", "fragments": VALUE,
                           "case_sensitive": case}, value=items)
        opts: dict[str, Any] = {"checker": "contains", "value": VALUE, "case_sensitive": case}
        if mode == "any":
            opts["any"] = True
        return Mapped(opts, value=items)
    return make


def _regex(negate: bool) -> Maker:
    def make(value: object, threshold: object) -> Mapped:
        if not isinstance(value, str) or not value:
            return none("regex without a pattern")
        try:
            pattern = js_to_re2(value)
            _compiles(pattern)
        except ValueError as exc:
            return none(f"the JavaScript pattern uses {exc}")
        return _re2(pattern, negate)
    return make


def _compiles(pattern: str) -> None:
    from smevals.checkers.base import CheckFailure
    from smevals.checkers.regex import compile_re2

    try:
        compile_re2(pattern)
    except CheckFailure as exc:
        raise ValueError(f"what RE2 refuses: {exc.reason}") from None


def _re2(pattern: str, negate: bool) -> Mapped:
    opts: dict[str, Any] = {"checker": "regex", "pattern": VALUE}
    if negate:
        opts["negate"] = True
    return Mapped(opts, value=pattern)


def _starts(negate: bool) -> Maker:
    def make(value: object, threshold: object) -> Mapped:
        if not isinstance(value, str) or not value:
            return none("starts-with without a value")
        return _re2(r"\A" + "".join(f"\\x{{{ord(c):X}}}" for c in value), negate)
    return make


SCHEMA_KEYWORDS = frozenset({
    "type", "properties", "required", "items", "enum", "const", "additionalProperties",
    "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "uniqueItems", "minProperties", "maxProperties",
    "anyOf", "oneOf", "allOf", "not", "title", "description", "default", "examples"})


def _keywords(schema: object) -> set[str]:
    """Every keyword a schema uses (properties' names are not keywords)."""
    if isinstance(schema, list):
        return {k for item in schema for k in _keywords(item)}
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, sub in schema.items():
        if key == "properties" and isinstance(sub, dict):
            found |= {k for s in sub.values() for k in _keywords(s)}
        elif key not in ("enum", "const", "default", "examples", "required"):
            found |= _keywords(sub)
    return found


def _json(contains: bool) -> Maker:
    def make(value: object, threshold: object) -> Mapped:
        if isinstance(value, str):
            import yaml

            try:
                value = yaml.safe_load(value)
            except yaml.YAMLError:
                return none("a schema that is not YAML")
        if value not in (MISSING, None) and not isinstance(value, dict):
            return none("a JSON schema must be a mapping")
        schema = isinstance(value, dict)
        opts: dict[str, Any] = {"checker": "json_schema", "schema": VALUE} if schema else \
            {"checker": "json_valid"}
        mapped = Mapped(opts, value=value if schema else True)
        if contains:
            opts["extract"] = "json"
            mapped.fidelity, mapped.why = APPROXIMATE, (
                "promptfoo finds JSON objects in the text with a lenient YAML reader; smevals "
                "takes the first JSON value of a fenced block, else of the text")
        elif schema and _keywords(value) - SCHEMA_KEYWORDS:
            odd = ", ".join(sorted(_keywords(value) - SCHEMA_KEYWORDS))
            mapped.fidelity, mapped.why = APPROXIMATE, (
                f"the schema uses {odd}, which smevals' JSON Schema validator may read "
                "otherwise than promptfoo's (ajv)")
        return mapped
    return make


def _levenshtein(value: object, threshold: object) -> Mapped:
    """Passes when the edit distance (over UTF-16 units, as promptfoo counts) is at most
    `threshold` (promptfoo's default 5)."""
    if not isinstance(value, str):
        return none("levenshtein needs a string value")
    limit = 5 if threshold is None else threshold
    if isinstance(limit, bool) or not isinstance(limit, int | float) \
            or not (math.isfinite(limit) and limit >= 0):
        return none("levenshtein needs a non-negative threshold")
    return Mapped({"checker": "levenshtein", "value": VALUE, "max_distance": math.floor(limit),
                   "utf16": True}, value=value)


def _approx(mapped: Mapped, why: str) -> Mapped:
    if mapped.options is not None:
        mapped.fidelity, mapped.why = APPROXIMATE, why
    return mapped


def _scored(checker: str, default: float, extra: dict[str, Any] | None = None) -> Maker:
    def make(value: object, threshold: object) -> Mapped:
        if not (isinstance(value, str) and value) and _items(value) is None:
            return none(f"{checker} needs a reference text")
        opts = {"checker": checker, "reference": VALUE, **(extra or {}),
                "threshold": threshold if isinstance(threshold, int | float) else default}
        return _approx(Mapped(opts, value=value), f"smevals' {checker} score is not computed "
                       "as promptfoo's (tokens, n-grams and smoothing differ)")
    return make


def _limit(checker: str, key: str, measured: str) -> Maker:
    def make(value: object, threshold: object) -> Mapped:
        if not isinstance(threshold, int | float) or isinstance(threshold, bool):
            return none("needs a numeric threshold")
        return _approx(Mapped({"checker": checker, key: threshold}, value=True),
                       f"the {measured} is the one smevals measures for the Run")
    return make


def _rubric(value: object, threshold: object) -> Mapped:
    if not isinstance(value, str) or not value:
        return none("a rubric must be text (a file or object rubric is not read)")
    if isinstance(threshold, int | float):
        opts = {"checker": "llm_score", "rubric": VALUE, "scale": [0, 1],
                "threshold": threshold}
    else:
        opts = {"checker": "llm_judge", "rubric": VALUE}
    return _approx(Mapped(opts, value=value), JUDGED)


def _closedqa(value: object, threshold: object) -> Mapped:
    if not isinstance(value, str) or not value:
        return none("needs a criterion")
    return _approx(Mapped({"checker": "llm_judge", "rubric": VALUE},
                          value=f"The answer meets this criterion: {value}"), JUDGED)


def _factuality(value: object, threshold: object) -> Mapped:
    if not _scalar(value) or js_text(value) == "":
        return none("needs the expected fact")
    return _approx(Mapped({"checker": "llm_answer_match", "expected": VALUE},
                          value=js_text(value)), JUDGED)


def _relevance(value: object, threshold: object) -> Mapped:
    limit = threshold if isinstance(threshold, int | float) else 0.5
    return _approx(Mapped({"checker": "llm_score", "rubric": "The answer is relevant to the "
                           "question asked and answers it.", "scale": [0, 1],
                           "threshold": limit}, value=True), JUDGED)


def _code(language: str, negate: bool) -> Maker:
    def make(value: object, threshold: object) -> Mapped:
        if not isinstance(value, str) or not value.strip():
            return none(f"a {language} assertion needs its code (or a file://)")
        opts: dict[str, Any] = {"checker": language, "code": VALUE}
        if isinstance(threshold, int | float) and not isinstance(threshold, bool):
            opts["threshold"] = threshold
        if negate:
            opts["negate"] = True
        return Mapped(opts, value=value)
    return make


def is_script_ref(kind: str, value: object) -> bool:
    """A javascript/python assertion whose value names a file (`file://x.py:fn`)."""
    base = kind[4:] if kind.startswith("not-") else kind
    return base in ("javascript", "python") and isinstance(value, str) and bool(
        re.match(r"file://", value))


_PLAIN: dict[str, Maker] = {
    "equals": _equals(False), "contains": _contains(True), "icontains": _contains(False),
    "contains-any": _listed(True, "any"), "icontains-any": _listed(False, "any"),
    "contains-all": _listed(True, "all"), "icontains-all": _listed(False, "all"),
    "regex": _regex(False), "starts-with": _starts(False), "is-json": _json(False),
    "contains-json": _json(True), "levenshtein": _levenshtein,
    "rouge-n": _scored("rouge", 0.75, {"rouge_type": "rouge_1"}),
    "bleu": _scored("bleu", 0.5), "latency": _limit("latency_threshold", "max_ms", "latency"),
    "cost": _limit("cost_threshold", "max_usd", "cost"), "llm-rubric": _rubric,
    "model-graded-closedqa": _closedqa, "factuality": _factuality,
    "model-graded-factuality": _factuality, "answer-relevance": _relevance,
    "javascript": _code("javascript", False), "python": _code("python", False),
}

_NOT: dict[str, Maker] = {
    "equals": _equals(True), "contains": _contains(True, True),
    "icontains": _contains(False, True), "contains-any": _listed(True, "none"),
    "icontains-any": _listed(False, "none"), "regex": _regex(True),
    "starts-with": _starts(True), "javascript": _code("javascript", True),
    "python": _code("python", True),
}
