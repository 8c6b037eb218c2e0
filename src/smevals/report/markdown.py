"""The Markdown report: a superset of the original smevals report.

Per Eval: a header with the grader, its version and the counts; the leaderboard of
config x model (mean ±stderr, runs and fails, pass rate with its n and 95% Wilson interval,
competition ranks); tag shares; repeats (stable/flaky, pass@k, pass^k); one block per
config x model with its metrics and tags, and with --by-task its scores per task.
"""

from __future__ import annotations

from smevals.report.checks import CheckRow
from smevals.report.document import ANY, CURRENT, VERSION, EvalReport, Settings
from smevals.report.repeats import Repeats
from smevals.report.rows import ERRORED, FAILED, OLDER, STALE, UNGRADED
from smevals.report.suite import summary_markdown
from smevals.report.summary import (
    SCORE,
    Group,
    by_task,
    counts_text,
    metrics,
    pass_text,
    ranked_by,
    ranks,
    tag_counts,
)
from smevals.report.summary import table_cell as cell


def render(reports: list[EvalReport], settings: Settings, filters: str = "") -> str:
    """Each Eval's report; with several Evals (a Suite), their summary table first."""
    parts = ["\n".join(summary_markdown(reports))] if len(reports) > 1 else []
    parts += [render_eval(r, settings, filters) for r in reports]
    return "\n\n".join(parts) + "\n"


def render_eval(report: EvalReport, settings: Settings, filters: str = "") -> str:
    lines = [f"# {report.name}", ""]
    lines += header(report, settings, filters)
    if not report.collected.rows:
        lines += ["", "No graded Runs."]
        return "\n".join(lines)
    lines += ["", "## Leaderboard", ""] + leaderboard_lines(report.groups)
    if report.checks.several:
        lines += ["", "## Checks", ""] + check_table(report)
    tags = tag_lines(report)
    if tags:
        lines += ["", "## Tags", ""] + tags
    if report.repeats:
        lines += ["", "## Repeats", ""] + [x for r in report.repeats for x in repeat_lines(r)]
    for group in report.groups:
        checks = report.checks.pairs.get((group.config, group.model), []) \
            if report.checks.several else []
        lines += ["", f"## {group.label}", ""] + block_lines(group, settings.by_task, checks)
    return "\n".join(lines)


def check_table(report: EvalReport) -> list[str]:
    """One line per Check, one column per config x model (in leaderboard order): the pass
    rate over its verdicts, its mean score, errors and skips."""
    groups = report.groups
    cells = [{c.check: c.cell for c in report.checks.pairs.get((g.config, g.model), [])}
             for g in groups]
    errored = report.collected.count(ERRORED)
    lines = [f"Over the Grades counted and the {errored} errored one(s) left out above (an "
             "error is a Check without a verdict).", ""] if errored else []
    lines += ["| Check | " + " | ".join(cell(g.label) for g in groups) + " |",
             "|---" * (len(groups) + 1) + "|"]
    for row in report.checks.overall:
        lines.append(f"| {cell(row.check)} | "
                     + " | ".join(c.get(row.check, "-") for c in cells) + " |")
    return lines



def grader_line(report: EvalReport) -> str:
    if report.choice == VERSION:
        return (f"- Grader: {report.grader} (version {report.version}, chosen with "
                "--grader-version)")
    if report.choice == ANY:
        return (f"- Grader: {report.grader} (version {report.version}; the newest Grade of "
                "any version counts, --any-version)")
    return f"- Grader: {report.grader} (version {report.version})"


def header(report: EvalReport, settings: Settings, filters: str) -> list[str]:
    c = report.collected
    rows, ungraded, older = len(c.rows), c.count(UNGRADED), c.count(OLDER)
    lines = [grader_line(report)]
    if report.rev:
        lines.append(f"- Revision: {report.rev} (commit {(report.commit or '')[:12]})")
    lines.append(f"- Graded: {rows} runs ({rows - c.passed} failed, {ungraded + older} ungraded)")
    lines.append(f"- Generated: {settings.generated}")
    if filters:
        lines.append(f"- Filters: {filters}")
    tampered = c.tampering()
    if tampered:
        lines.append(tampering_line(tampered))
    if c.count(FAILED):
        lines.append(f"- Excluded: {c.count(FAILED)} run(s) (runner failed)")
    if c.count(ERRORED):
        lines.append(f"- ⚠ Errors: {c.count(ERRORED)} run(s) whose Grade is an error (a "
                     "judge or webhook gave no verdict; neither pass nor fail, left out) - "
                     "`smevals grade` tries them again")
    if older:
        lines.append(older_line(report, older))
    if report.older_versions:
        lines.append(f"- ⚠ {report.older_versions} of {rows} grades came from an older version "
                     f"of grader '{report.grader}' - consider --regrade")
    if c.count(STALE):
        why = ", ".join(f"{reason}: {n}" for reason, n in report.stale.items())
        lines.append(f"- Stale: {c.count(STALE)} run(s) left out ({why}; --include-stale to "
                     "include them)")
    if c.stale_included:
        lines.append(f"- Stale: {c.stale_included} run(s) made from an older task, config or "
                     "runner included (--include-stale)")
    judged = c.judge_usage()
    if judged:
        lines.append(judge_line(judged))
    lines += [f"- Note: {note}" for note in report.notes]
    return lines


def tampering_line(tampered: dict[str, int]) -> str:
    """`- ⚠ 2 Runs with tampering (conftest: 1, hidden-copy: 1): ...`."""
    runs = tampered["runs"]
    kinds = ", ".join(f"{kind}: {n}" for kind, n in sorted(tampered.items()) if kind != "runs")
    return (f"- ⚠ {runs} Run{'s' if runs != 1 else ''} with tampering ({kinds}): their change "
            "touched test machinery or protected paths; each Grade names them")


def judge_line(usage: dict[str, float]) -> str:
    """`- Judge: 12 calls (30 more answered by the judge cache), 5,120 input + 340 output
    tokens, $0.0042`."""
    calls, cached = int(usage.get("calls", 0)), int(usage.get("cached", 0))
    line = f"- Judge: {calls} call(s) ({cached} more answered by the judge cache)"
    line += (f", {int(usage.get('input_tokens', 0)):,} input + "
             f"{int(usage.get('output_tokens', 0)):,} output tokens")
    if "cost_usd" in usage:
        line += f", ${usage['cost_usd']:.4f}"
    return line


def older_line(report: EvalReport, older: int) -> str:
    if report.choice == CURRENT:
        return (f"- ⚠ {older} run(s) graded only by an older version of grader "
                f"'{report.grader}' or an older answer key (counted as ungraded) - run "
                "`smevals grade` to grade them")
    return (f"- ⚠ {older} run(s) graded only by other versions of grader '{report.grader}' "
            "(counted as ungraded)")


PASS_RATE_NOTE = ("Ranked by pass rate: not every Grade has a score (a failed Check without "
                  "a score leaves its Grade unscored), so a mean score would leave out mostly "
                  "failures; each score shows its n.")


def leaderboard_lines(groups: list[Group]) -> list[str]:
    if ranked_by(groups) != SCORE:
        return [PASS_RATE_NOTE, ""] + _pass_board(groups)
    rank_width = len(str(len(groups)))
    score_width = max(len(g.display) for g in groups)
    model_width = max(len(g.model) for g in groups)
    where = [f"({g.config}, {counts_text(g.n, g.failed)}{_scored(g)})" for g in groups]
    where_width = max(map(len, where))
    out = []
    for rank, group, place in zip(ranks(groups), groups, where, strict=True):
        out.append(f"{rank:>{rank_width}}. {group.display:<{score_width}}  "
                   f"{group.model:<{model_width}}  {place:<{where_width}}  "
                   f"pass {pass_text(group.passed, group.n)}")
    return out


def _pass_board(groups: list[Group]) -> list[str]:
    """`1. pass 88% (14/16), 95% CI [0.64, 0.97]  large  (default, 16 runs, 2 fails)  score
    1.00 ±0.00 (n=14 of 16)`: ranked by pass rate, the score with its n."""
    rank_width = len(str(len(groups)))
    passes = [pass_text(g.passed, g.n) for g in groups]
    pass_width = max(map(len, passes))
    model_width = max(len(g.model) for g in groups)
    where = [f"({g.config}, {counts_text(g.n, g.failed)})" for g in groups]
    where_width = max(map(len, where))
    out = []
    for rank, group, rate, place in zip(ranks(groups), groups, passes, where, strict=True):
        out.append(f"{rank:>{rank_width}}. pass {rate:<{pass_width}}  "
                   f"{group.model:<{model_width}}  {place:<{where_width}}  "
                   f"score {group.score_text}".rstrip())
    return out


def tag_lines(report: EvalReport) -> list[str]:
    rows = report.collected.rows
    total = len(rows)
    width = len(str(total))
    return [f"- {count:>{width}}/{total} {f'({count / total:.0%})':>6}  {tag}"
            for tag, count in tag_counts(rows)]


def repeat_lines(rep: Repeats) -> list[str]:
    cells, top = len(rep.cells), rep.max_k
    runs = f"{top}" if rep.min_n == top else f"{rep.min_n}-{top}"
    lines = [f"- {rep.model} ({rep.config}): {cells} task(s) with {runs} runs each: "
             f"{rep.count('stable_pass')} stable pass, {rep.count('stable_fail')} stable fail, "
             f"{rep.count('flaky')} flaky"]
    if rep.flaky:
        lines.append("  - flaky: " + ", ".join(f"{c.task} ({c.passed}/{c.n} pass)"
                                               for c in rep.flaky))
    table = rep.table()
    lines.append("  - pass@k: " + ", ".join(f"k={k} {at:.2f}{_n(n, cells)}"
                                            for k, at, _hat, n in table))
    lines.append("  - pass^k: " + ", ".join(f"k={k} {hat:.2f}{_n(n, cells)}"
                                            for k, _at, hat, n in table))
    return lines


def _n(n: int, cells: int) -> str:
    return "" if n == cells else f" (n={n} tasks)"


def block_lines(group: Group, with_tasks: bool, checks: list[CheckRow] | None = None) -> list[str]:
    lines = [f"- score: {group.display} over {scored_text(group)}",
             f"- pass rate: {pass_text(group.passed, group.n)}"]
    lines += [f"- {m.name}: {m.display}" for m in metrics(group.rows)]
    tags = block_tags(group)
    if tags:
        lines.append(f"- tags: {tags}")
    lines += [f"- check {c.check}: {c.line}" for c in checks or []]
    if group.runners:
        lines.append(runners_line(group.runners))
    if with_tasks:
        lines.append("- scores by task:")
        lines += [f"  - {t.task}: {_task_text(t)}" for t in by_task(group)]
    return lines


def runners_line(runners: list[tuple[str, int]]) -> str:
    """`- runner: smevals:codex 0.171.0`, or with several versions each with its Runs."""
    if len(runners) == 1:
        return f"- runner: {runners[0][0]}"
    return "- runners: " + ", ".join(f"{name} ({n} run{'s' if n != 1 else ''})"
                                     for name, n in runners)


def _task_text(task: Group) -> str:
    """`0.90 ±0.06 (3/3 pass)`, or `1.00 ±0.00 (n=2 of 3; 2/3 pass)` when some Run of the
    task has no score."""
    n = f"n={len(task.scores)} of {task.n}; " if task.scores and not task.complete else ""
    return f"{task.display} ({n}{task.passed}/{task.n} pass)"


def _scored(group: Group) -> str:
    return "" if len(group.scores) == group.n else f", {len(group.scores)} scored"


def scored_text(group: Group) -> str:
    """`18 runs` when every Run has a score, else `14 scored (of 18 runs, 2 fails)`."""
    counts = counts_text(group.n, group.failed)
    scored = len(group.scores)
    return counts if scored == group.n else f"{scored} scored (of {counts})"


def block_tags(group: Group) -> str:
    if group.n == 1:
        return ", ".join(sorted(group.rows[0].tags))
    return ", ".join(f"{tag} {count / group.n:.0%}" for tag, count in tag_counts(group.rows))
