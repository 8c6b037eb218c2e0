"""promptfoo assertions → smevals Checks (built-in checkers), or a reason why not.

`check_for(type, value, threshold)` gives the Check's options, with `VALUE` where the
assertion's value goes (a literal for `defaultTest`, `{task: KEY}` for a test's own).
"""

from __future__ import annotations

import math
import re
from typing import Any

VALUE = object()      # stands for the assertion's value in an options template

NO_COUNTERPART = {
    "javascript": "runs JavaScript: no built-in counterpart (write a checker program)",
    "python": "runs Python: no built-in counterpart (write a checker program)",
    "webhook": "calls a webhook with promptfoo's payload: see custom_webhook in the judges "
               "docs to port it by hand",
    "similar": "embedding similarity: no built-in counterpart",
    "select-best": "compares every provider's output at once: no built-in counterpart "
                   "(llm_pairwise compares with one named reference model)",
    "is-valid-openai-tools-call": "no built-in validates tool calls against the provider's "
                                  "tool schemas (tool_called checks names only)",
    "is-valid-openai-function-call": "no built-in validates function calls against the "
                                     "provider's function schemas",
}


def _escape(text: str) -> str:
    """A literal for RE2 (Python's re.escape output is RE2 syntax too)."""
    return re.escape(text)


def _strs(value: Any) -> list[str] | None:
    if isinstance(value, list) and value and all(isinstance(v, str | int | float) for v in value):
        return [str(v) for v in value]
    return None


def _listed(value: Any) -> list[str] | None:
    """A list of strings, or a comma-separated string, as its items; None if one is empty."""
    items = _strs(value) or ([s.strip() for s in value.split(",")] if isinstance(value, str)
                             else None)
    return items if items and all(items) else None


def check_for(kind: str, value: Any, threshold: Any) -> tuple[dict[str, Any] | None, str, Any]:
    """(options, why-not, stored value): options None means no counterpart (why says why)."""
    negate = kind.startswith("not-")
    base = kind[4:] if negate else kind
    if kind in NO_COUNTERPART or base in NO_COUNTERPART:
        return None, NO_COUNTERPART.get(kind) or NO_COUNTERPART[base], None
    table = _NOT if negate else _PLAIN
    make = table.get(base)
    if make is None:
        if negate and base in _PLAIN:
            return None, f"no built-in checks the opposite of {base}", None
        return None, "unknown assertion type: no counterpart", None
    return make(value, threshold)


Made = tuple[dict[str, Any] | None, str, Any]


def _need_str(value: Any) -> bool:
    return isinstance(value, str | int | float) and str(value) != ""


def _equals(value: Any, threshold: Any) -> Made:
    if value is None:
        return None, "equals without a value", None
    return {"checker": "exact", "value": VALUE}, "", value if not isinstance(value, int | float) \
        else str(value)


def _contains(case: bool) -> Any:
    def make(value: Any, threshold: Any) -> Made:
        if not _need_str(value):
            return None, "a contains check needs a non-empty string value", None
        return {"checker": "contains", "value": VALUE, "case_sensitive": case}, "", str(value)
    return make


def _any(case: bool) -> Any:
    def make(value: Any, threshold: Any) -> Made:
        items = _listed(value)
        if items is None:
            return None, "needs a non-empty list of strings", None
        opts: dict[str, Any] = {"checker": "regex", "pattern": VALUE}
        if not case:
            opts["flags"] = "i"
        return opts, "", "(?:" + "|".join(_escape(s) for s in items) + ")"
    return make


def _all(case: bool) -> Any:
    def make(value: Any, threshold: Any) -> Made:
        items = _listed(value)
        if items is None:
            return None, "needs a non-empty list of strings", None
        if case:
            return {"checker": "contains", "fragments": VALUE}, "", items
        return {"checker": "contains", "value": VALUE, "case_sensitive": False}, "", items
    return make


def _regex(value: Any, threshold: Any) -> Made:
    if not _need_str(value):
        return None, "regex without a pattern", None
    return {"checker": "regex", "pattern": VALUE}, "", str(value)


def _starts(value: Any, threshold: Any) -> Made:
    if not _need_str(value):
        return None, "starts-with without a value", None
    return {"checker": "regex", "pattern": VALUE}, "", r"\A" + _escape(str(value))


def _is_json(value: Any, threshold: Any) -> Made:
    if isinstance(value, dict):
        return {"checker": "json_schema", "schema": VALUE}, "", value
    if value is not None:
        return None, "a JSON schema given as a file or text is not read", None
    return {"checker": "json_valid"}, "", True


def _contains_json(value: Any, threshold: Any) -> Made:
    made = _is_json(value, threshold)
    if made[0] is not None:
        made[0]["extract"] = "json"
    return made


def _scored(checker: str, default: float, extra: dict[str, Any] | None = None) -> Any:
    def make(value: Any, threshold: Any) -> Made:
        if not _need_str(value) and not _strs(value):
            return None, f"{checker} needs a reference text", None
        opts = {"checker": checker, "reference": VALUE, **(extra or {}),
                "threshold": threshold if isinstance(threshold, int | float) else default}
        return opts, "", value
    return make


def _limit(checker: str, key: str) -> Any:
    def make(value: Any, threshold: Any) -> Made:
        if not isinstance(threshold, int | float):
            return None, "needs a numeric threshold", None
        return {"checker": checker, key: threshold}, "", True
    return make


def _levenshtein(value: Any, threshold: Any) -> Made:
    """Passes when the edit distance is at most `threshold` (promptfoo's default 5)."""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return None, "levenshtein needs a string value", None
    limit = 5 if threshold is None else threshold
    if isinstance(limit, bool) or not isinstance(limit, int | float) \
            or not (math.isfinite(limit) and limit >= 0):
        return None, "levenshtein needs a non-negative threshold", None
    return {"checker": "levenshtein", "value": VALUE, "max_distance": math.floor(limit)}, "", \
        str(value)


def _rubric(value: Any, threshold: Any) -> Made:
    if not _need_str(value):
        return None, "a rubric must be text (a file or object rubric is not read)", None
    if isinstance(threshold, int | float):
        return {"checker": "llm_score", "rubric": VALUE, "scale": [0, 1],
                "threshold": threshold}, "", str(value)
    return {"checker": "llm_judge", "rubric": VALUE}, "", str(value)


def _closedqa(value: Any, threshold: Any) -> Made:
    if not _need_str(value):
        return None, "needs a criterion", None
    return {"checker": "llm_judge", "rubric": VALUE}, "", f"The answer meets this criterion: " \
        f"{value}"


def _factuality(value: Any, threshold: Any) -> Made:
    if not _need_str(value):
        return None, "needs the expected fact", None
    return {"checker": "llm_answer_match", "expected": VALUE}, "", str(value)


def _relevance(value: Any, threshold: Any) -> Made:
    limit = threshold if isinstance(threshold, int | float) else 0.5
    return {"checker": "llm_score", "rubric": "The answer is relevant to the question asked "
            "and answers it.", "scale": [0, 1], "threshold": limit}, "", True


_PLAIN: dict[str, Any] = {
    "equals": _equals, "contains": _contains(True), "icontains": _contains(False),
    "contains-any": _any(True), "icontains-any": _any(False),
    "contains-all": _all(True), "icontains-all": _all(False),
    "regex": _regex, "starts-with": _starts, "is-json": _is_json,
    "contains-json": _contains_json, "levenshtein": _levenshtein,
    "rouge-n": _scored("rouge", 0.75, {"rouge_type": "rouge_1"}),
    "bleu": _scored("bleu", 0.5), "latency": _limit("latency_threshold", "max_ms"),
    "cost": _limit("cost_threshold", "max_usd"), "llm-rubric": _rubric,
    "model-graded-closedqa": _closedqa, "factuality": _factuality,
    "model-graded-factuality": _factuality, "answer-relevance": _relevance,
}


def _not_contains(case: bool) -> Any:
    def make(value: Any, threshold: Any) -> Made:
        items = _strs(value) or ([str(value)] if _need_str(value) else None)
        if not items:
            return None, "needs a non-empty string value", None
        return {"checker": "not_contains", "fragments": VALUE, "case_sensitive": case}, "", items
    return make


def _not_regex(value: Any, threshold: Any) -> Made:
    made = _regex(value, threshold)
    if made[0] is not None:
        made[0]["checker"] = "not_regex"
    return made


def _not_starts(value: Any, threshold: Any) -> Made:
    made = _starts(value, threshold)
    if made[0] is not None:
        made[0]["checker"] = "not_regex"
    return made


def _not_any(case: bool) -> Any:
    def make(value: Any, threshold: Any) -> Made:
        items = _listed(value)
        if items is None:
            return None, "needs a non-empty list of strings", None
        return {"checker": "not_contains", "fragments": VALUE, "case_sensitive": case}, "", items
    return make


_NOT: dict[str, Any] = {
    "contains": _not_contains(True), "icontains": _not_contains(False),
    "contains-any": _not_any(True), "icontains-any": _not_any(False),
    "regex": _not_regex, "starts-with": _not_starts,
}
