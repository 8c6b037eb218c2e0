"""One ai-eval-forge check, judged by smevals' built-in checker of the same family.

`plan_check` translates a check object into a built-in Check (name and options), raising
`ForgeInputError` where ai-eval-forge itself crashes: an unknown type, a regex without a
pattern or with one RE2 cannot compile, a `min` that is not a number, non-string flags.
`judge` runs the Check and applies ai-eval-forge's verdict rule: the check passes iff its
score reaches `min` (default 1). A Check that smevals refuses to judge (fail closed: an empty
`contains` list, no sources, an expected value without tokens...) fails with score 0 and
its reason in `detail`, where ai-eval-forge would have passed it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from smevals.cases.casefile import Case, ForgeInputError, serialise
from smevals.checkers import CheckInput, option_problems, run_check

VALUE_KEY = "forge_value"
TYPES = ("exact", "contains", "regex", "token_f1", "json_valid", "json_field",
         "citation_coverage")


@dataclass(frozen=True)
class Planned:
    type: str
    required: bool
    minimum: float
    checker: str
    options: dict[str, Any]
    problem: str | None = None     # smevals refuses these options: the check fails closed
    task: dict[str, Any] = field(default_factory=dict)   # what `{task: KEY}` options read


def round4(value: float) -> float:
    """ai-eval-forge's reporting rounding: round(v * 10^4) / 10^4 (half to even)."""
    return round(value * 10**4) / 10**4


def plan_check(check: dict[str, Any], case: Case, number: int) -> Planned:
    where = f"{case.where}: case {case.id!r}: checks[{number}]"
    kind = check.get("type") or "token_f1"
    if kind not in TYPES:
        raise ForgeInputError(f"{where}: unknown check type {kind!r} "
                              f"(ai-eval-forge knows: {', '.join(TYPES)})")
    minimum = _minimum(check, where)
    checker, options = _TRANSLATE[kind](check, case, where)
    task = {}
    if kind == "json_field":   # passed through the Task, so that no value reads as `{task: K}`
        task, options = {VALUE_KEY: options["value"]}, {**options, "value": {"task": VALUE_KEY}}
    problems = option_problems(checker, options)
    listing = "; ".join(f"{path}: {msg}" if path else msg for path, msg in problems)
    if problems and kind in ("regex", "json_field"):
        raise ForgeInputError(f"{where}: {kind}: {listing}")
    return Planned(kind, check.get("required", True) is not False, minimum, checker, options,
                   listing or None, task)


def _minimum(check: dict[str, Any], where: str) -> float:
    value = check.get("min", 1)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ForgeInputError(f"{where}: `min` must be a number, not {value!r}") from None


def _value(check: dict[str, Any], case: Case) -> str:
    return serialise(check["value"]) if "value" in check else case.expected


def _exact(check: dict[str, Any], case: Case, where: str) -> tuple[str, dict[str, Any]]:
    return "exact", {"value": _value(check, case)}


def _contains(check: dict[str, Any], case: Case, where: str) -> tuple[str, dict[str, Any]]:
    raw = check.get("value", case.expected)
    values = [serialise(v) for v in raw] if isinstance(raw, list) else [serialise(raw)]
    sensitive = check.get("caseSensitive", False)
    if not isinstance(sensitive, bool):
        sensitive = bool(sensitive)
    return "contains", {"value": values, "case_sensitive": sensitive, "threshold": 0}


def _regex(check: dict[str, Any], case: Case, where: str) -> tuple[str, dict[str, Any]]:
    pattern = check.get("pattern") if "pattern" in check else check.get("value")
    if not isinstance(pattern, str):
        raise ForgeInputError(f"{where}: regex needs a string `pattern` (or `value`)")
    flags = check.get("flags", "i")
    if not isinstance(flags, str):
        raise ForgeInputError(f"{where}: regex `flags` must be a string, not {flags!r}")
    kept = "".join(sorted({f for f in flags.lower() if f in "ims"}))
    return "regex", {"pattern": pattern, "flags": kept}


def _token_f1(check: dict[str, Any], case: Case, where: str) -> tuple[str, dict[str, Any]]:
    return "token_f1", {"value": _value(check, case), "threshold": 0}


def _json_valid(check: dict[str, Any], case: Case, where: str) -> tuple[str, dict[str, Any]]:
    return "json_valid", {}


def _json_field(check: dict[str, Any], case: Case, where: str) -> tuple[str, dict[str, Any]]:
    path = check.get("path")
    if not isinstance(path, str):
        raise ForgeInputError(f"{where}: json_field needs a string `path`")
    return "json_field", {"path": path, "value": check.get("value")}


def _citations(check: dict[str, Any], case: Case, where: str) -> tuple[str, dict[str, Any]]:
    sources = check.get("sources", case.sources)
    items = sources if isinstance(sources, list) else [] if sources is None else [sources]
    ids: list[Any] = []
    for item in items:
        ident = item.get("id", item) if isinstance(item, dict) else item
        if not (isinstance(ident, str) and not ident):   # ai-eval-forge drops empty ids
            ids.append(ident)
    return "citation_coverage", {"sources": ids, "threshold": 0}


_TRANSLATE: dict[str, Callable[[dict[str, Any], Case, str], tuple[str, dict[str, Any]]]] = {
    "exact": _exact, "contains": _contains, "regex": _regex, "token_f1": _token_f1,
    "json_valid": _json_valid, "json_field": _json_field, "citation_coverage": _citations,
}


def judge(planned: Planned, case: Case) -> dict[str, Any]:
    """{type, required, passed, score, min, detail} for this check on the case's output."""
    if planned.problem is not None:
        return _result(planned, 0.0, False, f"smevals refuses this check: {planned.problem}")
    result = run_check(planned.checker, planned.options,
                       CheckInput(case.actual, planned.task, None))
    if result.score is None:
        return _result(planned, 0.0, False, f"smevals fails this check: {result.notes}")
    score = float(result.score)
    return _result(planned, score, score >= planned.minimum, _detail(planned, score, case))


def _result(planned: Planned, score: float, passed: bool, detail: str) -> dict[str, Any]:
    return {"type": planned.type, "required": planned.required, "passed": passed,
            "score": round4(score), "min": planned.minimum, "detail": detail}


def _detail(planned: Planned, score: float, case: Case) -> str:
    kind = planned.type
    if kind in ("token_f1", "citation_coverage"):
        return f"{kind}={round4(score)}"
    if kind == "contains":
        count = len(planned.options["value"])
        return f"{round(score * count)}/{count} substrings found"
    if kind == "json_field":
        path = planned.options["path"]
        return f"{path}={json.dumps(reached(case.actual, path), ensure_ascii=False)}"
    words = {"exact": ("equal", "not equal"), "regex": ("matched", "no match"),
             "json_valid": ("valid JSON", "not valid JSON")}[kind]
    return words[0] if score >= 1 else words[1]


def reached(text: str, path: str) -> object:
    """The value at a dotted path as ai-eval-forge walks it (None when missing), for details."""
    try:
        node: Any = json.loads(text)
    except (ValueError, RecursionError):
        return None
    for segment in (s for s in path.split(".") if s):
        if isinstance(node, dict):
            node = node.get(segment)
        elif isinstance(node, list):
            try:
                node = node[int(segment)]
            except (ValueError, IndexError):
                return None
        else:
            return None
    return node
