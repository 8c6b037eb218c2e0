"""`smevals log` in each format: text (a terminal: sparklines, then each commit), Markdown,
CSV and JSON (the HistoryDoc itself, docs/diff.md "History")."""

from __future__ import annotations

import csv
import io

import orjson

from smevals import stats
from smevals.history.doc import NEW, CommitDoc, HistoryDoc, RowDoc

FORMATS = ("text", "json", "csv", "markdown")
BLOCKS = "▁▂▃▄▅▆▇█"
GAP = "·"                   # a commit where the pair has no figures (absent or damaged)
CSV_COLUMNS = ("sha", "date", "author", "subject", "commit_damage", "eval", "config", "model",
               "runs", "graded", "passed", "failed", "scored", "mean", "stderr",
               "mean_ci_low", "mean_ci_high", "pass_rate", "pass_rate_ci_low",
               "pass_rate_ci_high", "grader_version", "damage", "marks")

Key = tuple[str, str, str]          # (eval, config, model)
OTHER_FILES = 10                    # files named of a commit that changed no figure
INTERVALS = ("Intervals are 95%: a score's is its mean ± 1.96 standard errors, clipped to "
             "[0, 1] (none over a single score); a pass rate's is Wilson's.")


def render(doc: HistoryDoc, fmt: str) -> str:
    if fmt == "json":
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode()
    if fmt == "csv":
        return to_csv(doc)
    if fmt == "markdown":
        return to_markdown(doc)
    return to_text(doc)


# --- what every format says ---------------------------------------------------------------


def headline(doc: HistoryDoc) -> str:
    names = [e["eval"] for e in doc["evals"]]
    evals = names[0] + " or its results" if len(names) == 1 else \
        (", ".join(names) if len(names) <= 3 else f"any of the {len(names)} Evals") + \
        " or their results"
    listed = len(doc["commits"])
    if not listed:
        return (f"No commit in the range changed {evals} "
                f"({_commits(doc['commits_read'])} in the range).")
    with_rows = sum(1 for c in doc["commits"] if c["rows"])
    text = (f"{_commits(listed)} changed {evals} "
            f"(of {_commits(doc['commits_read'])} in the range), newest first")
    if listed == doc["range"]["n"]:             # -n N stopped the listing: more may have
        text = (f"The newest {_commits(listed)} that changed {evals} (-n {listed}; older "
                f"ones are not listed), of {_commits(doc['commits_read'])} in the range")
    if not with_rows:
        text += "; none of them has graded Runs that count"
    return text + "."


def _commits(n: int) -> str:
    return f"{n} commit" + ("" if n == 1 else "s")


def shallow_note(doc: HistoryDoc) -> str | None:
    if not doc["shallow"]:
        return None
    return (f"Shallow clone: only {_commits(doc['commits_read'])} could be read; the history "
            "before them is not in this clone (git fetch --unshallow).")


def latest(doc: HistoryDoc) -> list[tuple[RowDoc, CommitDoc]]:
    """Each Eval x config x model's row at the newest listed commit that has it, with
    that commit."""
    seen: dict[Key, tuple[RowDoc, CommitDoc]] = {}
    for commit in doc["commits"]:
        for row in commit["rows"]:
            seen.setdefault(_key(row), (row, commit))
    return [seen[k] for k in sorted(seen, key=lambda k: (_eval_order(doc, k[0]), k[1], k[2]))]


def _eval_order(doc: HistoryDoc, name: str) -> int:
    names = [e["eval"] for e in doc["evals"]]
    return names.index(name) if name in names else len(names)


def _key(row: RowDoc) -> Key:
    return (row["eval"], row["config"], row["model"])


def score_text(row: RowDoc) -> str:
    if row["damage"]:
        return "-"
    mean, err = row["mean"], row["stderr"]
    if mean is None:
        return "-"
    return f"{mean:.2f}" if err is None else f"{mean:.2f} ±{err:.2f}"


def pass_text(row: RowDoc) -> str:
    if row["damage"] or row["pass_rate"] is None:
        return "-"
    return f"{row['pass_rate']:.0%} ({row['passed']}/{row['runs']})"


def _ci(interval: list[float] | None) -> str:
    return stats.fmt_ci((interval[0], interval[1]) if interval else None)


def sparkline(doc: HistoryDoc, key: Key) -> str:
    """The pair's pass rate at each listed commit where its Eval changed, oldest first."""
    marks = []
    for commit in reversed(doc["commits"]):
        if key[0] not in commit["evals"]:
            continue
        row = next((r for r in commit["rows"] if _key(r) == key), None)
        rate = row["pass_rate"] if row else None
        marks.append(GAP if rate is None else BLOCKS[min(7, int(rate * 8))])
    return "".join(marks)


def changes_text(row: RowDoc) -> str:
    return "; ".join(row["changes"]) if row["marks"] != [NEW] else "new"


# --- text ---------------------------------------------------------------------------------


def to_text(doc: HistoryDoc) -> str:
    lines = [headline(doc)]
    note = shallow_note(doc)
    if note:
        lines.append(note)
    lines += [INTERVALS] if doc["commits"] else []
    rows = latest(doc)
    if rows:
        lines += ["", "Pass rate at each listed commit that changed the Eval, oldest first "
                  "(· no figures), and at the newest:"]
        width = max(len(_pair(r, doc)) for r, _c in rows)
        lines += [f"  {_pair(r, doc):<{width}}  {sparkline(doc, _key(r))}  pass {pass_text(r)}, "
                  f"score {score_text(r)}, {_runs(r)} at {c['short']}" for r, c in rows]
    for commit in doc["commits"]:
        lines += ["", *commit_lines(commit, doc)]
    return "\n".join(lines) + "\n"


def _pair(row: RowDoc, doc: HistoryDoc) -> str:
    pair = f"{row['config']} x {row['model']}"
    return f"{row['eval']}: {pair}" if len(doc["evals"]) > 1 else pair


def commit_lines(commit: CommitDoc, doc: HistoryDoc) -> list[str]:
    lines = [f"{commit['short']}  {commit['date'][:10]}  {commit['subject']}  "
             f"({commit['author']})"]
    if commit["damage"]:
        lines.append(f"  damaged: {commit['damage']} object(s) left out, nothing in them "
                     "counted (see `smevals verify`)")
    lines += [f"  note: {note}" for note in commit["notes"]]
    if commit["other_files"]:
        lines.append(f"  {other_files_text(commit)}")
    if not commit["rows"] and (commit["evals"] or not (commit["other_files"] or commit["notes"])):
        lines.append("  no graded Runs that count" if commit["evals"] else
                     "  no Eval here changed since the previous listed commit")
    shared = shared_changes(commit)
    for name, changes in shared.items():
        where = f"{name}: " if len(doc["evals"]) > 1 else ""
        lines += [f"  changed: {where}{change}" for change in changes]
    for row in commit["rows"]:
        lines.append(f"  {_pair(row, doc)}: {row_text(row)}")
        lines += [f"    changed: {change}" for change in row["changes"]
                  if row["marks"] != [NEW] and change not in shared.get(row["eval"], [])]
    return lines


def other_files_text(commit: CommitDoc) -> str:
    """`only files that change no figure or result changed: qa/README.md` (the figures are
    the previous listed commit's, not repeated)."""
    files = commit.get("other_files") or []
    shown = ", ".join(files[:OTHER_FILES]) + (
        f" and {len(files) - OTHER_FILES} more" if len(files) > OTHER_FILES else "")
    return f"only files that change no figure or result changed: {shown}"


def shared_changes(commit: CommitDoc) -> dict[str, list[str]]:
    """Per Eval, the changes every one of its rows at the commit has (said once), when more
    than one row has changes (a row that is new has none)."""
    out: dict[str, list[str]] = {}
    for name in dict.fromkeys(r["eval"] for r in commit["rows"]):
        rows = [r for r in commit["rows"] if r["eval"] == name and r["marks"] != [NEW]]
        if len(rows) < 2:
            continue
        common = [c for c in rows[0]["changes"] if all(c in r["changes"] for r in rows)]
        if common:
            out[name] = common
    return out


def _runs(row: RowDoc) -> str:
    return f"{row['runs']} Run" + ("" if row["runs"] == 1 else "s")


def row_text(row: RowDoc) -> str:
    runs = _runs(row)
    if row["damage"]:
        return (f"{runs}, {row['damage']} damaged object(s): figures left out, grader "
                f"{row['grader_version']}")
    if not row["runs"]:
        return f"no Run counts here, grader {row['grader_version']}"
    score = score_text(row)
    score += f" {_ci(row['mean_ci'])}" if row["mean_ci"] else ""
    new = ", new" if row["marks"] == [NEW] else ""
    return (f"score {score}, pass {pass_text(row)} {_ci(row['pass_rate_ci'])}, {runs}, "
            f"grader {row['grader_version']}{new}")


# --- Markdown -----------------------------------------------------------------------------


def to_markdown(doc: HistoryDoc) -> str:
    lines = ["# History", "", headline(doc)]
    note = shallow_note(doc)
    if note:
        lines += ["", note]
    rows = latest(doc)
    if len(doc["evals"]) > 1 and rows:
        lines += ["", "## Summary", "", "Each Eval x config x model at the newest listed "
                  "commit that has it.", "",
                  "| eval | config | model | commit | runs | score | pass rate | grader |",
                  "|---|---|---|---|---:|---|---|---|"]
        lines += [_summary_line(r, c) for r, c in rows]
    if doc["commits"]:
        lines += ["", "## Commits", "", INTERVALS, "",
                  "| commit | date | subject | eval | config | model | runs | score | 95% CI "
                  "| pass rate | 95% CI | grader | changes |",
                  "|---|---|---|---|---|---|---:|---|---|---|---|---|---|"]
        for commit in doc["commits"]:
            lines += _markdown_rows(commit)
    return "\n".join(lines) + "\n"


def _summary_line(row: RowDoc, commit: CommitDoc) -> str:
    return (f"| {_md(row['eval'])} | {_md(row['config'])} | {_md(row['model'])} | "
            f"{commit['short']} | {row['runs']} | {score_text(row)} | {pass_text(row)} | "
            f"{row['grader_version']} |")


def _markdown_rows(commit: CommitDoc) -> list[str]:
    head = f"| {commit['short']} | {commit['date'][:10]} | {_md(commit['subject'])} |"
    if commit["damage"]:
        head = head[:-1] + f" (damaged: {commit['damage']}) |"
    if not commit["rows"]:
        said = "no graded Runs that count" if commit["evals"] else \
            other_files_text(commit) if commit.get("other_files") else "no Eval changed"
        return [head + f" | | | | | | | | | {_md(said)} |"]
    out = []
    for row in commit["rows"]:
        changes = "damaged: figures left out" if row["damage"] else changes_text(row)
        out.append(f"{head} {_md(row['eval'])} | {_md(row['config'])} | {_md(row['model'])} | "
                   f"{row['runs']} | {score_text(row)} | {_ci(row['mean_ci'])} | "
                   f"{pass_text(row)} | {_ci(row['pass_rate_ci'])} | {row['grader_version']} | "
                   f"{_md(changes)} |")
    return out


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|")


# --- CSV ----------------------------------------------------------------------------------


def to_csv(doc: HistoryDoc) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for commit in doc["commits"]:
        head = [commit["sha"], commit["date"], commit["author"], commit["subject"],
                commit["damage"]]
        if not commit["rows"]:
            writer.writerow(head + [""] * (len(CSV_COLUMNS) - len(head)))
        for row in commit["rows"]:
            writer.writerow(head + _csv_row(row))
    return out.getvalue()


def _csv_row(row: RowDoc) -> list[object]:
    blank: list[object] = ["", ""]
    mean_ci: list[object] = list(row["mean_ci"] or []) or blank
    pass_ci: list[object] = list(row["pass_rate_ci"] or []) or blank
    return [row["eval"], row["config"], row["model"], row["runs"], row["graded"],
            row["passed"], row["failed"], row["scored"], _num(row["mean"]),
            _num(row["stderr"]), *mean_ci, _num(row["pass_rate"]), *pass_ci,
            row["grader_version"], row["damage"], ";".join(row["marks"])]


def _num(value: float | None) -> object:
    return "" if value is None else value
