"""`report`'s and `log`'s figures, taken from their JSON and computed again from the tables
(runs_df, checks_df, history_df) and from DuckDB over the exported files, in one shape, so
that a test compares them with `==`.

The computation from the tables uses only their columns and `smevals.stats` (the formulas
the docs give); floats are then equal to the last bit (statistics.fmean and the exact
standard deviation do not depend on the order of the values)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import smevals
from smevals import stats
from tests.helpers import Result, run_cli

if TYPE_CHECKING:
    import pandas as pd

# pandas and duckdb are imported where they are used: a test module that imports this one
# for `cli` or `report_json` costs a test process nothing more at collection.

EPOCH = "1767322800"
FIGURES = ("runs", "passed", "failed", "scored", "mean", "stderr", "pass_rate", "pass_rate_ci")
CHECK_FIGURES = ("runs", "passed", "failed", "errors", "skipped", "pass_rate", "pass_rate_ci",
                 "scored", "mean", "stderr")
SUMMARY = ("runs", "graded", "passed", "failed", "ungraded", "older_version_only",
           "failed_runs_excluded", "stale_excluded", "stale_included", "errored", "judge",
           "scored", "mean", "stderr", "pass_rate", "pass_rate_ci")


def cli(*args: str, cwd: Path) -> Result:
    return run_cli(*args, cwd=cwd, env={"SOURCE_DATE_EPOCH": EPOCH})


def report_json(cwd: Path, *args: str) -> dict[str, Any]:
    res = cli("report", *args, "--format", "json", cwd=cwd)
    assert res.code == 0, res.both
    out: dict[str, Any] = json.loads(res.out)
    return out


# --- what report says ---------------------------------------------------------------------


def from_report(ev: dict[str, Any]) -> dict[str, Any]:
    """One Eval of `report --format json`, in the shape `from_tables` gives."""
    summary = {k: ev["summary"].get(k) for k in SUMMARY}
    summary["errored"] = summary["errored"] or 0
    summary["pass_rate_ci"] = tuple(summary["pass_rate_ci"])
    board = {}
    for g in ev["leaderboard"]:
        entry = {f: g[f] for f in FIGURES}
        entry["pass_rate_ci"] = tuple(entry["pass_rate_ci"])
        entry["tasks"] = {t["task"]: (t["runs"], t["passed"], t["scored"], t["mean"],
                                      t["stderr"]) for t in g["tasks"]}
        entry["metrics"] = {m["name"]: (m["kind"], m["n"], m["mean"], m["stderr"])
                            for m in g["metrics"]}
        board[(g["config"], g["model"])] = entry
    checks = {(g["config"], g["model"]): _checks(g["checks"]) for g in ev["leaderboard"]}
    checks[("", "")] = _checks(ev["summary"]["checks"])
    repeats = {(r["config"], r["model"]): (
        (r["stable_pass"], r["stable_fail"], r["flaky"]),
        [(k["k"], k["pass_at_k"], k["pass_hat_k"], k["tasks"]) for k in r["k"]])
        for r in ev["repeats"]}
    return {"summary": summary, "leaderboard": board, "checks": checks, "repeats": repeats,
            "tags": {t["tag"]: t["count"] for t in ev["tags"]},
            "rows": sorted((r["run_id"], r["grade_id"], r["outcome"], r["score"], r["stale"])
                           for r in ev["rows"]),
            "excluded": sorted((e["run_id"], e["reason"]) for e in ev["excluded"])}


def _checks(rows: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    return {c["check"]: tuple(tuple(c[f]) if f == "pass_rate_ci" else c[f]
                              for f in CHECK_FIGURES) for c in rows}


# --- the same from the tables ---------------------------------------------------------------


def _floats(series: pd.Series) -> list[float]:
    return [float(v) for v in series.dropna()]


def _group(rows: pd.DataFrame) -> dict[str, Any]:
    n, passed = len(rows), int(rows["passed"].sum())
    scores = _floats(rows["score"])
    return {"runs": n, "passed": passed, "failed": n - passed, "scored": len(scores),
            "mean": stats.mean(scores), "stderr": stats.stderr(scores),
            "pass_rate": passed / n if n else None, "pass_rate_ci": stats.wilson(passed, n)}


def from_tables(runs: pd.DataFrame, checks: pd.DataFrame) -> dict[str, Any]:
    """One Eval's figures computed from its rows of runs_df and checks_df."""
    counted = runs[runs["counted"]]
    left = Counter(runs["left_out"].dropna())
    overall = _group(counted)
    summary = {"graded": len(counted), **overall, "runs": len(runs),
               "ungraded": left["ungraded"] + left["older_version"],
               "older_version_only": left["older_version"], "failed_runs_excluded":
               left["failed"], "stale_excluded": left["stale"],
               "stale_included": int(counted["stale"].sum()), "errored": left["error"],
               "judge": _judge(runs[runs["counted"] | (runs["left_out"] == "error")])}
    summary["pass_rate"] = summary["pass_rate"] if len(counted) else None
    board = {}
    for (config, model), rows in counted.groupby(["config", "model"], sort=False):
        entry = _group(rows)
        entry["tasks"] = {task: (len(t), int(t["passed"].sum()), len(_floats(t["score"])),
                                 stats.mean(_floats(t["score"])),
                                 stats.stderr(_floats(t["score"])))
                          for task, t in rows.groupby("task")}
        entry["metrics"] = _metrics(rows)
        board[(config, model)] = entry
    return {"summary": {k: summary[k] for k in SUMMARY}, "leaderboard": board,
            "checks": _check_figures(runs, checks), "repeats": _repeats(counted),
            "tags": dict(Counter(tag for tags in counted["tags"] for tag in set(tags.split()))),
            "rows": sorted((r.run_id, r.grade_id, r.outcome, _none(r.score), bool(r.stale))
                           for r in counted.itertuples()),
            "excluded": sorted((r.run_id, r.left_out) for r in runs[~runs["counted"]]
                               .itertuples())}


def _none(value: Any) -> Any:
    import pandas as pd

    return None if pd.isna(value) else float(value)


def _judge(rows: pd.DataFrame) -> dict[str, float] | None:
    """Judge usage summed as report sums it: the counted Grades, then the errored ones."""
    import pandas as pd

    ordered = pd.concat([rows[rows["counted"]], rows[~rows["counted"]]])
    out = {key: sum(float(v) for v in ordered[f"judge_{key}"].dropna()) for key in
           ("calls", "cached", "input_tokens", "output_tokens", "cost_usd")
           if ordered[f"judge_{key}"].notna().any()}
    return out or None


def _metrics(rows: pd.DataFrame) -> dict[str, tuple[Any, ...]]:
    out: dict[str, tuple[Any, ...]] = {}
    for column in sorted(c for c in rows.columns if c.startswith("metric.")):
        values = rows[column].dropna()
        if values.empty:
            continue
        name = column.removeprefix("metric.")
        if values.dtype == object or str(values.dtype) in ("str", "string"):
            continue                    # text: report ignores what is not a number
        if str(values.dtype) == "boolean":
            out[name] = ("boolean", len(values), int(values.sum()) / len(values), None)
        else:
            numbers = [float(v) for v in values]
            out[name] = ("number", len(numbers), sum(numbers) / len(numbers),
                         stats.stderr(numbers))     # report's metric mean: a plain sum
    return out


def _check_figures(runs: pd.DataFrame, checks: pd.DataFrame) -> dict[Any, Any]:
    looked = runs[runs["counted"] | (runs["left_out"] == "error")]
    out: dict[Any, Any] = {}
    pairs = [((c, m), looked[(looked["config"] == c) & (looked["model"] == m)],
              checks[(checks["config"] == c) & (checks["model"] == m)])
             for c, m in runs[runs["counted"]][["config", "model"]].drop_duplicates()
             .itertuples(index=False)]
    for key, grades, rows in [*pairs, (("", ""), looked, checks)]:
        figures = {}
        for name, one in rows.groupby("check", sort=False):
            verdicts = Counter(one["verdict"])
            passed, failed, errors = verdicts["pass"], verdicts["fail"], verdicts["error"]
            scores = _floats(one["score"])
            figures[name] = (len(grades), passed, failed, errors,
                             len(grades) - passed - failed - errors,
                             passed / (passed + failed) if passed + failed else None,
                             stats.wilson(passed, passed + failed), len(scores),
                             stats.mean(scores), stats.stderr(scores))
        out[key] = figures
    return out


def _repeats(counted: pd.DataFrame) -> dict[Any, Any]:
    out = {}
    for (config, model), rows in counted.groupby(["config", "model"], sort=False):
        cells = [(len(t), int(t["passed"].sum())) for _task, t in rows.groupby("task")
                 if len(t) >= 2]
        if not cells:
            continue
        kinds = Counter(stats.classify_counts(n, c) for n, c in cells)
        table = []
        for k in range(1, max(n for n, _c in cells) + 1):
            at = [stats.pass_at_k(n, c, k) for n, c in cells if n >= k]
            hat = [stats.pass_hat_k(n, c, k) for n, c in cells if n >= k]
            table.append((k, stats.mean(at) or 0.0, stats.mean(hat) or 0.0, len(at)))
        out[(config, model)] = ((kinds["stable_pass"], kinds["stable_fail"], kinds["flaky"]),
                                table)
    return out


# --- DuckDB over the exported files ---------------------------------------------------------


def from_duckdb(folder: Path, fmt: str, name: str) -> dict[str, Any]:
    """Pass rates and counts per config x model, and per Check, as SQL over the files."""
    import duckdb

    runs, checks = f"{folder}/runs.{fmt}", f"{folder}/checks.{fmt}"
    pairs = duckdb.execute(
        f"SELECT config, model, count(passed), sum(passed), avg(passed), count(score), "
        f"sum(CASE WHEN counted THEN 1 ELSE 0 END) FROM '{runs}' WHERE eval = ? "
        f"GROUP BY config, model HAVING count(passed) > 0", [name]).fetchall()
    per_check = duckdb.execute(
        f"SELECT \"check\", count(*) FILTER (verdict = 'pass'), "
        f"count(*) FILTER (verdict = 'fail'), count(*) FILTER (verdict = 'error'), "
        f"avg(passed) FROM '{checks}' WHERE eval = ? GROUP BY \"check\"", [name]).fetchall()
    return {"pairs": {(c, m): (n, int(p), rate, scored) for c, m, n, p, rate, scored, _k in pairs},
            "checks": {c: (p, f, e, rate) for c, p, f, e, rate in per_check}}


def duckdb_expected(ev: dict[str, Any]) -> dict[str, Any]:
    """What `from_duckdb` must give, from `report --format json`."""
    return {"pairs": {(g["config"], g["model"]): (g["runs"], g["passed"], g["pass_rate"],
                                                  g["scored"]) for g in ev["leaderboard"]},
            "checks": {c["check"]: (c["passed"], c["failed"], c["errors"], c["pass_rate"])
                       for c in ev["summary"]["checks"]}}


# --- log ----------------------------------------------------------------------------------

HISTORY = ("sha", "subject", "eval", "config", "model", "runs", "graded", "passed", "failed",
           "scored", "mean", "stderr", "pass_rate", "grader_version", "damage")


def from_log(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    out = []
    for commit in doc["commits"]:
        for row in commit["rows"]:
            ci, pci = row["mean_ci"] or [None, None], row["pass_rate_ci"] or [None, None]
            out.append((commit["sha"], commit["subject"], *(row[k] for k in HISTORY[2:]),
                        *ci, *pci, ";".join(row["marks"])))
    return out


def from_history(frame: pd.DataFrame) -> list[tuple[Any, ...]]:
    rows = frame[frame["eval"].notna()]
    cols = [*HISTORY, "mean_ci_low", "mean_ci_high", "pass_rate_ci_low", "pass_rate_ci_high",
            "marks"]
    import pandas as pd

    return [tuple(None if pd.isna(v) else v.item() if hasattr(v, "item") else v for v in r)
            for r in rows[cols].itertuples(index=False)]


def rows(n: int) -> str:
    return f"{n} row" + ("" if n == 1 else "s")


def same_figures(cwd: Path, paths: list[str], *options: str, **kwargs: Any) -> None:
    """report --format json against runs_df/checks_df and DuckDB over each format of
    export, with the same options (CLI flags and their Python names)."""
    doc = report_json(cwd, *paths, *options)
    runs = smevals.runs_df([cwd / p for p in paths], **kwargs)
    checks = smevals.checks_df([cwd / p for p in paths], **kwargs)
    assert list(runs["eval"].unique()) == [ev["eval"] for ev in doc["evals"] if ev["summary"]
                                           ["runs"]]
    for ev in doc["evals"]:
        mine = runs[runs["eval"] == ev["eval"]]
        assert from_tables(mine, checks[checks["eval"] == ev["eval"]]) == from_report(ev)
        if ev["summary"]["graded"]:
            assert mine["passed"].mean() == ev["summary"]["pass_rate"]
    for fmt in ("parquet", "csv", "jsonl"):
        out = cwd / f"exported-{fmt}"
        res = cli("export", *paths, *options, "--format", fmt, "-o", str(out), cwd=cwd)
        assert res.code == 0, res.both
        assert res.out == (f"Wrote {out.relative_to(cwd)}/runs.{fmt} ({rows(len(runs))})\n"
                           f"Wrote {out.relative_to(cwd)}/checks.{fmt} ({rows(len(checks))})\n")
        for ev in doc["evals"]:
            if ev["summary"]["runs"]:
                assert from_duckdb(out, fmt, ev["eval"]) == duckdb_expected(ev), fmt
