"""`smevals score --compare BEFORE AFTER`: ai-eval-forge's comparison of two result files.

Cases are matched by `id`. Each case in both files is a `regression` (pass -> fail), an
`improvement` (fail -> pass), `score_up` or `score_down` (same verdict, the score delta
rounded to 4 places is not zero) or `unchanged`; cases only in AFTER are added, only in
BEFORE removed. A regression or a removed case makes the comparison fail (exit 1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from smevals.cases.casefile import ForgeInputError, parse_cases
from smevals.cases.checks import round4
from smevals.cases.scoring import cell, score_cases

STATUSES = ("regression", "improvement", "score_up", "score_down", "unchanged")


def load_results(path: Path) -> dict[str, Any]:
    """A result document (`smevals score` or ai-eval-forge output); a case file is scored."""
    try:
        text = path.read_text(encoding="utf-8").removeprefix("\ufeff")
    except FileNotFoundError:
        raise ForgeInputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ForgeInputError(f"{path}: cannot read: {exc}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and "summary" in doc and "cases" in doc:
        return _checked(doc, path)
    return score_cases(parse_cases(text, str(path)))


def _checked(doc: dict[str, Any], path: Path) -> dict[str, Any]:
    cases = doc["cases"]
    if not isinstance(cases, list):
        raise ForgeInputError(f"{path}: `cases` must be a list")
    seen: set[str] = set()
    for number, case in enumerate(cases):
        where = f"{path}: cases[{number}]"
        if not isinstance(case, dict) or "id" not in case:
            raise ForgeInputError(f"{where}: a case result needs an `id`")
        if not isinstance(case.get("passed"), bool):
            raise ForgeInputError(f"{where}: `passed` must be true or false")
        score = case.get("score")
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise ForgeInputError(f"{where}: `score` must be a number")
        if str(case["id"]) in seen:
            raise ForgeInputError(f"{where}: duplicate case id {str(case['id'])!r}")
        seen.add(str(case["id"]))
    return doc


def compare(before: dict[str, Any], after: dict[str, Any], labels: tuple[str, str]
            ) -> dict[str, Any]:
    old = {str(c["id"]): c for c in before["cases"]}
    new = {str(c["id"]): c for c in after["cases"]}
    rows = [_row(key, old[key], new[key]) for key in old if key in new]
    counts = {status: sum(1 for r in rows if r["status"] == status) for status in STATUSES}
    added = [_brief(key, case) for key, case in new.items() if key not in old]
    removed = [_brief(key, case) for key, case in old.items() if key not in new]
    base, cur = _side(labels[0], before), _side(labels[1], after)
    return {
        "baseline": base,
        "current": cur,
        "passRateDelta": round4(cur["passRate"] - base["passRate"]),
        "counts": {**counts, "added": len(added), "removed": len(removed)},
        "cases": rows,
        "added": added,
        "removed": removed,
    }


def failed(result: dict[str, Any]) -> bool:
    return bool(result["counts"]["regression"] or result["counts"]["removed"])


def _side(label: str, doc: dict[str, Any]) -> dict[str, Any]:
    total = len(doc["cases"])
    passed = sum(1 for c in doc["cases"] if c["passed"])
    return {"label": label, "total": total, "passed": passed,
            "passRate": passed / total if total else 0}


def _row(key: str, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    delta = round4(new["score"] - old["score"])
    if old["passed"] and not new["passed"]:
        status = "regression"
    elif new["passed"] and not old["passed"]:
        status = "improvement"
    else:
        status = "score_up" if delta > 0 else "score_down" if delta < 0 else "unchanged"
    return {"id": key, "status": status, "before": {"passed": old["passed"],
            "score": old["score"]}, "after": {"passed": new["passed"], "score": new["score"]},
            "delta": delta}


def _brief(key: str, case: dict[str, Any]) -> dict[str, Any]:
    return {"id": key, "passed": case["passed"], "score": case["score"]}


def render_markdown(result: dict[str, Any]) -> str:
    base, cur, counts = result["baseline"], result["current"], result["counts"]
    points = round(result["passRateDelta"] * 100, 2)
    lines = [
        f"# Comparison: {base['label']} -> {cur['label']}",
        "",
        f"- Pass rate: {_pct(base)} -> {_pct(cur)} ({points:+g} points)",
        "- " + ", ".join(f"{label}: {counts[key]}" for key, label in _COUNTS),
    ]
    for title, keep in (("Regressions", ("regression",)), ("Improvements", ("improvement",)),
                        ("Score changes", ("score_up", "score_down"))):
        rows = [r for r in result["cases"] if r["status"] in keep]
        if rows:
            lines += ["", f"## {title}", "", "| Case | Before | After | Change |",
                      "| --- | --- | --- | ---: |"]
            lines += [f"| {cell(r['id'])} | {_verdict(r['before'])} | {_verdict(r['after'])} "
                      f"| {r['delta']:+g} |" for r in rows]
    for title, key in (("Added cases", "added"), ("Removed cases", "removed")):
        if result[key]:
            lines += ["", f"## {title}", ""]
            lines += [f"- {c['id']} ({_verdict(c)})" for c in result[key]]
    return "\n".join(lines) + "\n"


_COUNTS = (("regression", "Regressions"), ("improvement", "Improvements"),
           ("score_up", "Score up"), ("score_down", "Score down"), ("unchanged", "Unchanged"),
           ("added", "Added"), ("removed", "Removed"))


def _pct(side: dict[str, Any]) -> str:
    return f"{round(side['passRate'] * 100)}% ({side['passed']}/{side['total']})"


def _verdict(case: dict[str, Any]) -> str:
    return f"{'pass' if case['passed'] else 'fail'} {case['score']:g}"
