"""`smevals score`: ai-eval-forge's case verdicts, suite summary and report shapes.

A case passes iff every required check passed (when none is required, every check must
pass); its score is the mean of the rounded check scores, rounded to 4 places. The summary
keeps ai-eval-forge's fields and rounding: `passRate` and `averageScore` unrounded,
`totalCostUsd` to 6 places, `averageLatencyMs` to a whole number (half to even).
"""

from __future__ import annotations

import json
from typing import Any

from smevals.cases.casefile import Case
from smevals.cases.checks import Planned, judge, plan_check, round4


def plan_case(case: Case) -> list[Planned]:
    """Translate every check of the case; ForgeInputError on what ai-eval-forge cannot run."""
    return [plan_check(check, case, number) for number, check in enumerate(case.checks)]


def score_case(case: Case, planned: list[Planned] | None = None) -> dict[str, Any]:
    checks = [judge(p, case) for p in (plan_case(case) if planned is None else planned)]
    required = [c for c in checks if c["required"]] or checks
    score = round4(sum(c["score"] for c in checks) / len(checks)) if checks else 1.0
    return {"id": case.id, "passed": all(c["passed"] for c in required), "score": score,
            "checks": checks, "meta": case.meta()}


def score_cases(cases: list[Case]) -> dict[str, Any]:
    """The result document: {"summary": {...}, "cases": [...]}. Every case is planned first,
    so bad input raises before anything is scored."""
    plans = [plan_case(case) for case in cases]
    results = [score_case(case, planned) for case, planned in zip(cases, plans, strict=True)]
    return {"summary": summarise(cases, results), "cases": results}


def summarise(cases: list[Case], results: list[dict[str, Any]]) -> dict[str, Any]:
    total = len(results)
    passed = sum(1 for r in results if r["passed"])
    cost = sum(c.cost_usd for c in cases)
    latency = sum(c.latency_ms for c in cases)
    return {
        "total": total,
        "passed": passed,
        "failed": total - passed,
        "passRate": passed / total if total else 0,
        "averageScore": sum(r["score"] for r in results) / total if total else 0,
        "totalCostUsd": round(cost, 6),
        "averageLatencyMs": round(latency / total) if total else 0,
    }


def render_json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render_markdown(doc: dict[str, Any], title: str = "smevals score") -> str:
    s = doc["summary"]
    lines = [
        f"# {title}",
        "",
        f"- Total: {s['total']}",
        f"- Passed: {s['passed']}",
        f"- Failed: {s['failed']}",
        f"- Pass rate: {round(s['passRate'] * 100)}%",
        f"- Average score: {round4(s['averageScore'])}",
        "",
        "| Case | Result | Score | Failed checks |",
        "| --- | --- | ---: | --- |",
    ]
    for case in doc["cases"]:
        failed = ", ".join(c["type"] for c in case["checks"] if not c["passed"]) or "-"
        result = "pass" if case["passed"] else "fail"
        lines.append(f"| {cell(case['id'])} | {result} | {case['score']} | {cell(failed)} |")
    return "\n".join(lines) + "\n"


def cell(text: str) -> str:
    """A Markdown table cell: `|` escaped, line breaks as spaces."""
    return str(text).replace("|", "\\|").replace("\r", " ").replace("\n", " ")
