"""Scores that never mislead (docs/reports.md#scores-that-not-every-grade-has).

The flow where it was found: a grader of a `contains` without a score, then a scored Check
(a judge, here a scored `contains`), under the default `scoring: last`. A failed `contains`
leaves its Grade unscored, so the failures have no score and each model's mean score is
1.00 over its passes: the leaderboard must rank by pass rate and show each score's n. Then
a grader whose failing Grades still score 1 (the last Check's score): every place that
shows such a score says why it is not 0, and `diff` compares no scores over partial sides.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.helpers import run_cli, write
from tests.report.scores import (
    ENV,
    FAILS_WITH_SCORE_1,
    NOTE,
    NOTE_T1,
    scores_repo,
)

# every Check scores; t1 fails not_contains for every model, yet the last Check scores 1


def test_partial_scores_rank_by_pass_rate_and_show_their_n(tmp_path: Path) -> None:
    ev = scores_repo(tmp_path)
    res = run_cli("report", str(ev), env=ENV)
    assert res.code == 0, res.both
    board = res.out.split("## Leaderboard\n\n", 1)[1].split("\n\n## ", 1)[0]
    assert board.splitlines() == [
        "Ranked by pass rate: not every Grade has a score (a failed Check without a score "
        "leaves its Grade unscored), so a mean score would leave out mostly failures; each "
        "score shows its n.",
        "",
        "1. pass 88% (7/8), 95% CI [0.53, 0.98]  beta   (default, 8 runs, 1 fail)   "
        "score 1.00 ±0.00 (n=7 of 8)",
        "2. pass 62% (5/8), 95% CI [0.31, 0.86]  alpha  (default, 8 runs, 3 fails)  "
        "score 1.00 ±0.00 (n=5 of 8)",
    ]
    gate = run_cli("report", str(ev), "--fail-under", "0.9", env=ENV)
    assert gate.code == 1, gate.both             # 1.00 over the passes only: fail closed
    assert gate.err == (
        "Error: gate failed:\n"
        "  qa: beta (default): only 7 of 8 Grade(s) have a score, so its mean 1 is not over "
        "every Run; --fail-under needs a score on every Grade (gate on --min-pass-rate "
        "instead)\n"
        "  qa: alpha (default): only 5 of 8 Grade(s) have a score, so its mean 1 is not over "
        "every Run; --fail-under needs a score on every Grade (gate on --min-pass-rate "
        "instead)\n")
    by_task = run_cli("report", str(ev), "--by-task", "-m", "alpha", env=ENV).out
    assert "  - t1: 1.00 (1/1 pass)" in by_task  # (n=1 of 1 needs no saying)
    assert "  - t8: - (0/1 pass)" in by_task

    doc = json.loads(run_cli("report", str(ev), "--format", "json", env=ENV).out)
    (entry,) = doc["evals"]
    assert entry["ranked_by"] == "pass_rate"
    assert [(g["rank"], g["model"], g["scored"], g["runs"]) for g in entry["leaderboard"]] == [
        (1, "beta", 7, 8), (2, "alpha", 5, 8)]


def test_a_failed_grade_shows_its_score_only_with_the_reason(tmp_path: Path) -> None:
    ev = scores_repo(tmp_path)
    write(ev / "graders" / "default.yaml", FAILS_WITH_SCORE_1)
    graded = run_cli("grade", str(ev), "-m", "alpha", "-t", "t1", "-t", "t8", env=ENV)
    assert graded.code == 1, graded.both
    lines = [x.split(" ... ", 1)[1] for x in graded.out.splitlines() if " ... " in x]
    assert sorted(lines) == [f"fail score=1 ({NOTE})", f"fail score=1 ({NOTE_T1})"]
    run_cli("grade", str(ev), env=ENV)

    # every Grade now has a score, but a failed one's score is shown with its reason
    rows = list(csv.DictReader(io.StringIO(run_cli("report", str(ev), "--format", "csv",
                                                   env=ENV).out)))
    shown = {(r["model"], r["task"]): (r["outcome"], r["score"], r["score_note"]) for r in rows}
    assert shown[("alpha", "t8")] == ("fail", "1.0", NOTE)
    assert shown[("beta", "t1")] == ("fail", "1.0", NOTE_T1)
    assert shown[("beta", "t2")] == ("pass", "1.0", "")
    junit = run_cli("report", str(ev), "--format", "junit", env=ENV).out
    assert f"fail score=1 ({NOTE})" in junit and "fail score=1\n" not in junit

    # A (HEAD) has unscored failures, B (the working tree) scores them all: no score
    # comparison over a subset chosen by the outcome; the flips say why 1 is not 0
    md = run_cli("diff", "HEAD", str(ev), env=ENV).out
    row = next(x for x in md.splitlines() if x.startswith("| default | beta |"))
    assert row.split(" | ")[2:5] == ["1.00 ±0.00 (n=7 of 8)", "1.00 ±0.00 (n=8)",
                                     "- (not every Grade has a score)"]
    assert f": fail 1 ({NOTE_T1})" in md
    doc = json.loads(run_cli("diff", "HEAD", str(ev), "--format", "json", env=ENV).out)
    beta = next(g for g in doc["evals"][0]["groups"] if g["model"] == "beta")
    assert beta["scores_complete"] is False
    assert (beta["delta"]["mean"], beta["paired"]["mean_delta"], beta["paired"]["ci"]) == (
        None, None, None)
    # the grader changed: one flip of the same Runs (McNemar p=1), no score to compare
    assert beta["verdict"] == "grader: no significant change; evidence: no significant change"
    assert beta["split"]["grader"]["mean_delta"] is None
    assert beta["split"]["evidence"]["same_runs"] is True
    flip = next(f for f in doc["evals"][0]["flips"] if f["model"] == "beta")
    assert flip["b"][0]["score_note"] == NOTE_T1


def test_the_init_template_never_fails_with_score_1(tmp_path: Path) -> None:
    """`smevals init`'s grader: exact_match, then a checker program. Made lenient (it accepts
    the city anywhere in the answer), the program passes an answer exact_match fails; the
    Grade failed, so its score is the weakest Check's (`scoring.method: min`), 0."""
    ev = tmp_path / "ev"
    assert run_cli("init", str(ev)).code == 0
    check = ev / "graders" / "check.py"
    check.write_text(check.read_text().replace("ok = output.lower() == expected.lower()",
                                               "ok = expected.lower() in output.lower()"))
    runner = ev / "configs" / "run.sh"
    runner.write_text(runner.read_text().replace('echo "Paris"',
                                                 'echo "The capital of France is Paris."'))
    res = run_cli("run", "-g", str(ev))
    assert res.code == 1, res.both
    assert "    grade: fail score=0\n" in res.out
    tested = run_cli("test", str(ev))
    assert tested.code == 0, tested.both
