"""The split of each config x model (diff/split.py) in Markdown and JSON: `diff`'s "Grader
and evidence" section and each group's `split` (docs/diff.md)."""

from __future__ import annotations

from typing import Any

from smevals import stats
from smevals.diff.compare import EvalDiff, GroupDiff
from smevals.diff.split import Split, sentence


def split_lines(diff: EvalDiff) -> list[str]:
    """`### Grader and evidence`: one sentence per config x model, then the figures; nothing
    when no group of the Eval is under two grader versions."""
    groups = [g for g in diff.groups if g.split is not None or g.unsplit]
    if not groups:
        return []
    ci = f"{(1 - diff.alpha) * 100:g}% CI"
    lines = ["", "### Grader and evidence", "",
             "The grader version changed, so each change is split in two. The grader's part: "
             "the same Runs (A's) graded by A's grader and by B's, each Run paired with itself "
             "(a paired bootstrap interval of the score change, McNemar's test of the pass/fail "
             "moves). The evidence's part: A's Runs against B's Runs, both graded by B's "
             "grader (unpaired: a bootstrap interval of the difference of the means, Fisher's "
             "exact test of the pass rates). A verdict of a drop or a gain is the "
             "evidence's; the grader's part is never the model's.", ""]
    for g in groups:
        said = sentence(g.split, diff.alpha) if g.split else f"not split: {g.unsplit}"
        lines.append(f"- {g.model} ({g.config}): {said}")
    lines += ["", f"| config | model | Runs paired | grader Δ score | {ci} | grader Δ pass "
              "| pass→fail / fail→pass | McNemar | evidence Runs A / B | evidence Δ score "
              f"| {ci} | evidence Δ pass | Fisher |", "|---|---|---|---|---|---|---|---|---|"
              "---|---|---|---|"]
    lines += [_row(g, g.split) for g in groups if g.split is not None]
    return lines


def _row(g: GroupDiff, s: Split) -> str:
    gr, ev = s.grader, s.evidence
    return (f"| {g.config} | {g.model} | {gr.runs} of {s.runs_a} | {_signed(gr.mean_delta)} "
            f"| {stats.fmt_ci(gr.ci)} | {_points(gr.pass_delta)} | {gr.regressions} / "
            f"{gr.fixes} | {stats.fmt_p(gr.p)} | {ev.runs_a} / {ev.runs_b} "
            f"| {_signed(ev.mean_delta)} | {stats.fmt_ci(ev.ci)} | {_points(ev.pass_delta)} "
            f"| {stats.fmt_p(ev.p)} |")


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def _points(value: float) -> str:
    return f"{value * 100:+.1f} pts"


def split_json(g: GroupDiff, alpha: float) -> dict[str, Any] | None:
    """A group's `split`: null unless its sides count different grader versions."""
    s = g.split
    if s is None:
        return {"available": False, "reason": g.unsplit} if g.unsplit else None
    gr, ev = s.grader, s.evidence
    return {
        "available": True, "grader_change": s.change, "carried_by": s.carried_by(alpha),
        "text": sentence(s, alpha),
        "total": {"mean_delta": s.total_mean, "pass_rate_delta": s.total_pass},
        "grader": {"runs": gr.runs, "of": s.runs_a, "rescored": gr.rescored,
                   "mean_delta": gr.mean_delta, "ci": _ci(gr.ci),
                   "pass_rate_delta": gr.pass_delta, "regressions": gr.regressions,
                   "fixes": gr.fixes, "p": gr.p, "test": "mcnemar_exact",
                   "score_significant": gr.score_significant(),
                   "pass_significant": gr.pass_significant(alpha)},
        "evidence": {"runs_a": ev.runs_a, "runs_b": ev.runs_b, "same_runs": ev.same_runs,
                     "mean_delta": ev.mean_delta, "ci": _ci(ev.ci),
                     "pass_rate_delta": ev.pass_delta, "p": ev.p, "test": "fisher_exact",
                     "score_significant": ev.score_significant(),
                     "pass_significant": ev.pass_significant(alpha)},
        "unsplit": s.unsplit,
    }


def _ci(interval: tuple[float, float] | None) -> list[float] | None:
    return list(interval) if interval else None
