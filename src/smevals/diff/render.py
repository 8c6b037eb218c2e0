"""Render diffs as Markdown or JSON (the JSON shape is documented in docs/diff.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from smevals import stats
from smevals.diff import why as flip_why
from smevals.diff.compare import EvalDiff, Flip, GroupDiff, shown
from smevals.diff.splitview import split_json, split_lines
from smevals.diff.summary import summary_json, summary_markdown
from smevals.grade.score import score_note, score_text
from smevals.report import taskpass
from smevals.report.evidence import LeftOut, Pair
from smevals.report.rows import Row
from smevals.report.summary import Group

JSON_FORMAT = 1
LIST_LIMIT = 20
COLUMN = 56
MAX_LINES = 40

Outputs = Mapping[tuple[str, str], str]      # (side "a" or "b", Run rel) -> output.txt


@dataclass(frozen=True)
class SideInfo:
    label: str                  # what the reader sees: "HEAD", "working tree", "version abc"
    rev: str | None
    commit: str | None


def explanation(diff: EvalDiff) -> str | None:
    """Why things moved, when the Grades rather than the Runs changed."""
    regraded = sum(1 for f in diff.flips if f.regraded)
    if diff.same_runs and diff.version_changed:
        return (f"The same {diff.counted} Runs are counted on both sides and only their Grades "
                f"differ: regrading with grader version {diff.version_a} -> {diff.version_b}, "
                "not the model, explains the moves.")
    if diff.same_runs and diff.flips:
        return (f"The same {diff.counted} Runs are counted on both sides and only their Grades "
                "differ (same grader version, so answer keys or regrades): regrading, not the "
                "model, explains the moves.")
    if diff.version_changed and regraded:
        return (f"The grader version changed ({diff.version_a} -> {diff.version_b}): "
                f"{regraded} of {len(diff.flips)} flips are the same Runs regraded.")
    return None


def ci_label(alpha: float) -> str:
    return f"{(1 - alpha) * 100:g}% CI"


# --- Markdown --------------------------------------------------------------------------


def markdown(diffs: list[EvalDiff], a: SideInfo, b: SideInfo, alpha: float,
             outputs: Outputs | None = None, task_pass: str = taskpass.DEFAULT) -> str:
    lines = [f"# Diff: {a.label} -> {b.label}", "",
             f"A is {_where(a)}; B is {_where(b)}. Significance level {alpha:g}: each task is "
             "paired with itself; per task a side's score is the mean of its Runs and a task "
             f"passes when {taskpass.WORDS[task_pass]}{_rule(task_pass)}."]
    if len(diffs) > 1:
        lines += ["", *summary_markdown(diffs, verdict)]
    for diff in diffs:
        lines += ["", *eval_lines(diff, a, b, outputs)]
    return "\n".join(lines) + "\n"


def _rule(task_pass: str) -> str:
    return "" if task_pass == taskpass.DEFAULT else f" (--task-pass {task_pass})"


def _where(side: SideInfo) -> str:
    if side.commit:
        return f"{side.label} (commit {side.commit[:12]})"
    return side.label


def eval_lines(diff: EvalDiff, a: SideInfo, b: SideInfo, outputs: Outputs | None) -> list[str]:
    changed = "changed" if diff.version_changed else "unchanged"
    if diff.changed_files:
        changed += ": " + ", ".join(diff.changed_files)
    lines = [f"## {diff.name}", ""]
    if diff.status != "both":
        where = "B only" if diff.status == "added" else "A only"
        lines.append(f"- Eval {diff.status}: it is in {where}; its Runs are listed as "
                     f"{diff.status} below")
    lines += [f"- Grader: {diff.grader}, version {diff.version_a} in A, {diff.version_b} in B "
              f"({changed})",
              f"- Stale Runs left out: A {stale_text(diff.stale_a)}; "
              f"B {stale_text(diff.stale_b)}"]
    ungraded = (_total(diff.left_a, "ungraded"), _total(diff.left_b, "ungraded"))
    if any(ungraded):
        lines.append(f"- Ungraded Runs left out (no Grade of the side's grader version and "
                     f"answer keys): A {ungraded[0]}; B {ungraded[1]}")
    if any(diff.errored):
        lines.append(f"- Errored Grades left out (a judge or webhook gave no verdict; neither "
                     f"pass nor fail): A {diff.errored[0]}; B {diff.errored[1]}")
    lines += [f"- Runner changed: {c['config']} / {c['model']}: {', '.join(c['a'])} -> "
              f"{', '.join(c['b'])}" for c in runner_changes(diff)]
    why = explanation(diff)
    if why:
        lines.append(f"- {why}")
    lines.append(f"- Flips: {len(diff.regressions)} pass -> fail, {len(diff.fixes)} fail -> pass")
    lines += ["", "### By config x model", "", *group_table(diff), *left_out_table(diff)]
    lines += split_lines(diff)
    lines += ["", "### Flips", ""] + flip_lines(diff, a, b, outputs)
    lines += ["", "### Added and removed", ""] + change_lines(diff)
    return lines


def runner_changes(diff: EvalDiff) -> list[dict[str, Any]]:
    """The config x model pairs whose Runs record another runner version on each side (a
    harness's, or the agent loop's: their provenance), which the inputs hash leaves out."""
    changes = []
    for g in diff.groups:
        a = [name for name, _ in g.a.runners] if g.a else []
        b = [name for name, _ in g.b.runners] if g.b else []
        if a and b and a != b:
            changes.append({"config": g.config, "model": g.model, "a": a, "b": b})
    return changes


def stale_text(reasons: dict[str, int]) -> str:
    """`3 (task deleted: 2, runner changed: 1)`, or `none`."""
    total = sum(reasons.values())
    if not total:
        return "none"
    return f"{total} (" + ", ".join(f"{why}: {n}" for why, n in reasons.items()) + ")"


def _side(group: Group | None) -> tuple[str, str]:
    if group is None:
        return "-", "-"
    score = "-"
    if group.scores:
        score = group.score_text if not group.complete else \
            f"{group.display} (n={len(group.scores)})"
    return score, f"{group.pass_rate:.0%} ({group.passed}/{group.n})"


def group_table(diff: EvalDiff) -> list[str]:
    ci = ci_label(diff.alpha)
    lines = [f"| config | model | score A | score B | Δ score (paired) | {ci} of Δ | pass A "
             "| pass B | Δ pass | pass→fail / fail→pass | McNemar | verdict |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for g in diff.groups:
        (score_a, pass_a), (score_b, pass_b) = _side(g.a), _side(g.b)
        p = g.paired
        interval = f"{stats.fmt_ci(p.ci)} ({_tasks(p.scored)})" if p and p.ci else "-"
        delta = _signed(p.mean_delta) if p else "-"
        if p and not g.scores_complete and _some_scores(g):
            delta = "- (not every Grade has a score)"
        moves = f"{p.regressions} / {p.fixes}" if p else "-"
        test = f"{stats.fmt_p(p.p)} (n={p.tasks})" if p else "-"
        lines.append(f"| {g.config} | {g.model} | {score_a} | {score_b} | {delta} "
                     f"| {interval} | {pass_a} | {pass_b} | {_points(g.pass_delta)} | {moves} "
                     f"| {test} | {verdict(g, diff.alpha)} |")
    return lines


def _total(left: dict[Pair, LeftOut], what: str) -> int:
    return sum(getattr(counts, what) for counts in left.values())


def left_out_table(diff: EvalDiff) -> list[str]:
    """Per config x model, the Runs each side left out: ungraded, errored, stale (nothing
    when there are none)."""
    pairs = sorted(diff.left_a.keys() | diff.left_b.keys())
    if not pairs:
        return []
    lines = ["", "Runs left out of the figures above (ungraded: no Grade of the side's grader "
             "version; errored: no verdict; stale: made from older inputs):", "",
             "| config | model | ungraded A | ungraded B | errored A | errored B | stale A "
             "| stale B |", "|---|---|---|---|---|---|---|---|"]
    for pair in pairs:
        a, b = diff.left_a.get(pair, LeftOut()), diff.left_b.get(pair, LeftOut())
        lines.append(f"| {pair[0]} | {pair[1]} | {a.ungraded} | {b.ungraded} | {a.errored} "
                     f"| {b.errored} | {a.stale} | {b.stale} |")
    return lines
def _some_scores(g: GroupDiff) -> bool:
    return bool((g.a and g.a.scores) or (g.b and g.b.scores))


def _tasks(n: int) -> str:
    return f"{n} task" + ("" if n == 1 else "s")


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.1f} pts"


def verdict(g: GroupDiff, alpha: float) -> str:
    return g.verdict(alpha)


def flip_lines(diff: EvalDiff, a: SideInfo, b: SideInfo, outputs: Outputs | None) -> list[str]:
    lines: list[str] = []
    for title, flips in (("pass -> fail", diff.regressions), ("fail -> pass", diff.fixes)):
        lines += [f"#### {title} ({len(flips)})", ""]
        for flip in flips:
            cause = "regraded: same Runs" if flip.regraded else "different Runs"
            lines.append(f"- {flip.task} / {flip.config} / {flip.model} ({cause})")
            lines += [f"  - A: {_row(r)}" for r in flip.a] + [f"  - B: {_row(r)}" for r in flip.b]
            lines += flip_why.flip_lines(flip)
            if outputs is not None:
                lines += side_by_side(flip, a, b, outputs)
        if not flips:
            lines.append("None.")
        lines.append("")
    return lines[:-1]


def _row(row: Row) -> str:
    shown = score_text(row.grade.record)
    score = f" {shown}" if shown else ""
    return (f"run {row.run.id} grade {row.grade.id}: "
            f"{row.grade.record.get('outcome')}{score}")


def side_by_side(flip: Flip, a: SideInfo, b: SideInfo, outputs: Outputs) -> list[str]:
    run_a, run_b = shown(flip)
    left = _column(outputs.get(("a", run_a.run.rel), ""))
    right = _column(outputs.get(("b", run_b.run.rel), ""))
    head_a = _cut(f"A {a.label}: {run_a.run.id} ({run_a.grade.record.get('outcome')})")
    head_b = _cut(f"B {b.label}: {run_b.run.id} ({run_b.grade.record.get('outcome')})")
    body = [f"{head_a:<{COLUMN}} | {head_b}", f"{'-' * COLUMN}-+-{'-' * COLUMN}"]
    for index in range(max(len(left), len(right))):
        one = left[index] if index < len(left) else ""
        two = right[index] if index < len(right) else ""
        body.append(f"{one:<{COLUMN}} | {two}".rstrip())
    return ["", "  ```text", *[f"  {x}".rstrip() for x in body], "  ```"]


def _column(text: str) -> list[str]:
    lines = text.expandtabs(4).splitlines() or [""]
    out = [_cut(line) for line in lines[:MAX_LINES]]
    if len(lines) > MAX_LINES:
        out.append(f"... ({len(lines) - MAX_LINES} more lines)")
    return out


def _cut(line: str) -> str:
    return line if len(line) <= COLUMN else line[: COLUMN - 1] + "…"


def change_lines(diff: EvalDiff) -> list[str]:
    lines = []
    for word, change in (("Added", diff.added), ("Removed", diff.removed)):
        for what, items in (("Runs", change.runs), ("tasks", change.tasks),
                            ("models", change.models), ("configs", change.configs)):
            lines.append(f"- {word} {what}: {_listing(items)}")
    for side, change in (("A", diff.added), ("B", diff.removed)):
        if change.damaged:
            lines.append(f"- Runs damaged in {side} (left out there, not removed; see "
                         f"`smevals verify`): {_listing(change.damaged)}")
    return lines


def _listing(items: list[str]) -> str:
    if not items:
        return "none"
    shown_items = ", ".join(items[:LIST_LIMIT])
    more = f" and {len(items) - LIST_LIMIT} more" if len(items) > LIST_LIMIT else ""
    return f"{len(items)} ({shown_items}{more})"


# --- JSON ------------------------------------------------------------------------------


def to_json(diffs: list[EvalDiff], a: SideInfo, b: SideInfo, alpha: float, mode: str,
            regression: dict[str, Any], task_pass: str = taskpass.DEFAULT) -> str:
    doc = {"format": JSON_FORMAT, "mode": mode, "a": vars(a), "b": vars(b), "alpha": alpha,
           "ci_level": 1 - alpha, "task_pass": task_pass, "evals": [eval_json(d) for d in diffs],
           "regression": regression, "damaged": damaged_json(),
           "suite": summary_json(diffs, verdict)}
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode()


def damaged_json() -> list[dict[str, str]]:
    """Every damaged object either side left out (store, path inside it, problem)."""
    from smevals.store import damage

    return [{"store": label, "path": rel, "problem": why} for label, rel, why in damage.found()]


def eval_json(diff: EvalDiff) -> dict[str, Any]:
    return {
        "eval": diff.name, "status": diff.status, "grader": diff.grader,
        "version_a": diff.version_a,
        "version_b": diff.version_b, "version_changed": diff.version_changed,
        "version_changed_files": diff.changed_files,
        "same_runs": diff.same_runs, "explanation": explanation(diff),
        **({"runner_changed": changes} if (changes := runner_changes(diff)) else {}),
        "groups": [{**group_json(g, diff.alpha), "left_out": _left_json(diff, g)}
                   for g in diff.groups],
        "left_out": {side: {what: _total(left, what) for what in ("ungraded", "errored", "stale")}
                     for side, left in (("a", diff.left_a), ("b", diff.left_b))},
        "flips": [flip_json(f) for f in diff.flips],
        "added": vars(diff.added), "removed": vars(diff.removed),
        "stale": {"a": _stale_json(diff.stale_a), "b": _stale_json(diff.stale_b)},
        **({"errored": {"a": diff.errored[0], "b": diff.errored[1]}} if any(diff.errored)
           else {}),
    }


def _left_json(diff: EvalDiff, g: GroupDiff) -> dict[str, dict[str, int]]:
    pair = (g.config, g.model)
    return {"a": diff.left_a.get(pair, LeftOut()).as_dict(),
            "b": diff.left_b.get(pair, LeftOut()).as_dict()}


def _stale_json(reasons: dict[str, int]) -> dict[str, Any]:
    return {"left_out": sum(reasons.values()),
            "reasons": {why.replace(" ", "_"): n for why, n in reasons.items()}}


def side_json(group: Group | None) -> dict[str, Any] | None:
    if group is None:
        return None
    low, high = group.wilson
    return {"runs": group.n, "passed": group.passed, "pass_rate": group.pass_rate,
            "pass_rate_ci": [low, high], "scored": len(group.scores), "mean": group.mean,
            "stderr": group.stderr}


def group_json(g: GroupDiff, alpha: float) -> dict[str, Any]:
    p = g.paired
    paired = None if p is None else {
        "tasks": p.tasks, "scored": p.scored, "mean_delta": p.mean_delta,
        "ci": list(p.ci) if p.ci else None, "regressions": p.regressions, "fixes": p.fixes,
        "p": p.p, "score_significant": p.score_significant(),
        "pass_significant": p.pass_significant(alpha)}
    return {"config": g.config, "model": g.model, "status": g.status, "a": side_json(g.a),
            "b": side_json(g.b), "delta": {"mean": g.mean_delta, "pass_rate": g.pass_delta},
            "scores_complete": g.scores_complete,
            "paired": paired, "verdict": verdict(g, alpha), "split": split_json(g, alpha)}


def flip_json(flip: Flip) -> dict[str, Any]:
    def runs(rows: tuple[Row, ...]) -> list[dict[str, Any]]:
        return [{"run_id": r.run.id, "grade_id": r.grade.id, "grader_version": r.version,
                 "outcome": r.grade.record.get("outcome"), "score": r.score,
                 "score_note": score_note(r.grade.record) or None} for r in rows]

    return {"config": flip.config, "model": flip.model, "task": flip.task,
            "direction": "pass->fail" if flip.to_fail else "fail->pass",
            "cause": "regraded" if flip.regraded else "different_runs",
            "a": runs(flip.a), "b": runs(flip.b), **flip_why.flip_json(flip)}
