"""The summary over the Evals of a diff: one line per Eval x config x model (each Eval's
config x model in name order), which `diff` prints before the details when it compares
several Evals (a Suite)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from smevals.diff.compare import EvalDiff, GroupDiff
from smevals.report.summary import Group, table_cell

Verdict = Callable[[GroupDiff, float], str]


def _flips(diff: EvalDiff, g: GroupDiff) -> tuple[int, int]:
    """(pass -> fail, fail -> pass) tasks of one config x model."""
    mine = [f for f in diff.flips if (f.config, f.model) == (g.config, g.model)]
    return sum(1 for f in mine if f.to_fail), sum(1 for f in mine if not f.to_fail)


def summary_json(diffs: list[EvalDiff], verdict: Verdict) -> list[dict[str, Any]]:
    """One flat entry per Eval x config x model; `verdict(group, alpha)` words the verdict."""
    out = []
    for diff in diffs:
        for g in diff.groups:
            regressions, fixes = _flips(diff, g)
            out.append({"eval": diff.name, "config": g.config, "model": g.model,
                        "status": g.status, "runs_a": g.a.n if g.a else None,
                        "runs_b": g.b.n if g.b else None,
                        "pass_rate_a": g.a.pass_rate if g.a else None,
                        "pass_rate_b": g.b.pass_rate if g.b else None,
                        "pass_rate_delta": g.pass_delta,
                        "mean_a": g.a.mean if g.a else None,
                        "mean_b": g.b.mean if g.b else None, "mean_delta": g.mean_delta,
                        "regressions": regressions, "fixes": fixes,
                        "verdict": verdict(g, diff.alpha)})
    return out


def _rate(group: Group | None) -> str:
    return "-" if group is None else f"{group.pass_rate:.0%} ({group.passed}/{group.n})"


def _score(group: Group | None) -> str:
    return "-" if group is None or not group.scores else group.score_text


def summary_markdown(diffs: list[EvalDiff], verdict: Verdict) -> list[str]:
    """`## Summary: 2 Evals` and its table; an Eval without graded Runs on either side has
    one line that says so."""
    lines = [f"## Summary: {len(diffs)} Evals", "",
             "| Eval | config | model | pass A | pass B | Δ pass | score A | score B "
             "| pass→fail / fail→pass | verdict |", "|---|---|---|---|---|---|---|---|---|---|"]
    for diff in diffs:
        name = table_cell(diff.name)
        if not diff.groups:
            lines.append(f"| {name} | - | - | - | - | - | - | - | - | no graded Runs |")
        for g in diff.groups:
            regressions, fixes = _flips(diff, g)
            delta = "-" if g.pass_delta is None else f"{g.pass_delta * 100:+.1f} pts"
            lines.append(f"| {name} | {table_cell(g.config)} | {table_cell(g.model)} "
                         f"| {_rate(g.a)} | {_rate(g.b)} | {delta} | {_score(g.a)} "
                         f"| {_score(g.b)} | {regressions} / {fixes} "
                         f"| {verdict(g, diff.alpha)} |")
    return lines
