"""A change is split into what the grader did and what the evidence did (issue 37, DESIGN
principle 20), on the seven commits of the issue (tests/helpers/sevencommits.py): the
grader's `mean -> min` is the grader's, in `diff`'s text and JSON and in `log`; new Runs
alone are still the evidence's; intervals never leave [0, 1]; a README commit is listed
as such."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from smevals.evaldef.load import load_eval
from tests.helpers.golden import smevals
from tests.helpers.qa import GRADER_V1, Builder, commit, git, make_qa, write
from tests.helpers.sevencommits import EVAL, SUBJECTS, seven_repo

ONLY_GRADER = ("score -0.27: all from the grader (-0.27 on the same 15 Runs, mean → min); "
               "pass rate unchanged; no other evidence (the same Runs on both sides)")
MIXED = ("score -0.05: from the grader (-0.25 on the same 5 Runs, mean → min); evidence effect "
         "+0.20, not significant; pass rate +20.0 pts: no significant change (grader effect "
         "+0.0 pts on the same 5 Runs; evidence effect +20.0 pts)")


@pytest.fixture(scope="module")
def seven(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seven_repo(tmp_path_factory)


def diff_json(repo: Path, *args: str) -> dict[str, Any]:
    res = smevals("diff", *args, EVAL, "--format", "json", cwd=repo)
    assert res.code == 0, res.err
    out: dict[str, Any] = json.loads(res.out)
    return out


def group(doc: dict[str, Any], model: str) -> dict[str, Any]:
    (ev,) = doc["evals"]
    return next(g for g in ev["groups"] if g["model"] == model)


def table_row(text: str, model: str) -> list[str]:
    line = next(x for x in text.splitlines() if x.startswith(f"| default | {model} | "))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_scoring_change_is_the_graders_in_the_text(seven: Path) -> None:
    res = smevals("diff", "HEAD~3", "HEAD~2", EVAL, cwd=seven)
    assert (res.code, res.err) == (0, "")
    row = table_row(res.out, "mumble-1")
    # the "significant drop" with pass +0.0 points and McNemar p=1
    assert row[8:11] == ["+0.0 pts", "0 / 0", "p=1.000 (n=5)"]
    assert row[-1] == "grader: significant drop; evidence: no significant change"
    assert "| significant drop |" not in res.out
    assert f"- mumble-1 (default): {ONLY_GRADER}" in res.out.splitlines()
    assert "### Grader and evidence" in res.out
    gate = smevals("diff", "HEAD~3", "HEAD~2", EVAL, "--fail-on-regression=significant",
                   cwd=seven)
    assert (gate.code, gate.err) == (0, ""), gate.err


def test_the_scoring_change_is_the_graders_in_the_json(seven: Path) -> None:
    mumble = group(diff_json(seven, "HEAD~3", "HEAD~2"), "mumble-1")
    split = mumble["split"]
    assert (split["available"], split["carried_by"], split["grader_change"], split["text"]) == (
        True, "grader", "mean → min", ONLY_GRADER)
    grader, evidence = split["grader"], split["evidence"]
    assert (grader["runs"], grader["of"], grader["rescored"], grader["test"]) == (
        15, 15, 0, "mcnemar_exact")
    assert grader["mean_delta"] == pytest.approx(-4 / 15)
    assert grader["ci"][1] < 0 and grader["score_significant"]
    assert (grader["regressions"], grader["fixes"], grader["p"]) == (0, 0, 1.0)
    assert evidence == {"runs_a": 15, "runs_b": 15, "same_runs": True, "mean_delta": 0.0,
                        "ci": [0.0, 0.0], "pass_rate_delta": 0.0, "p": 1.0,
                        "test": "fisher_exact", "score_significant": False,
                        "pass_significant": False}
    assert split["total"]["mean_delta"] == pytest.approx(grader["mean_delta"])
    assert mumble["verdict"] == "grader: significant drop; evidence: no significant change"


def test_new_samples_and_the_scoring_change_split_and_add_up(seven: Path) -> None:
    doc = diff_json(seven, "HEAD~4", "HEAD~2")
    mumble = group(doc, "mumble-1")["split"]
    assert mumble["text"] == MIXED and mumble["carried_by"] == "grader"
    assert (mumble["grader"]["runs"], mumble["evidence"]["runs_a"],
            mumble["evidence"]["runs_b"]) == (5, 5, 15)
    for model in ("mumble-1", "steady-7b"):
        split = group(doc, model)["split"]
        total = split["total"]
        assert split["unsplit"] == 0
        assert split["grader"]["mean_delta"] + split["evidence"]["mean_delta"] == \
            pytest.approx(total["mean_delta"])
        assert split["grader"]["pass_rate_delta"] + split["evidence"]["pass_rate_delta"] == \
            pytest.approx(total["pass_rate_delta"])
    text = smevals("diff", "HEAD~4", "HEAD~2", EVAL, cwd=seven).out
    assert f"- mumble-1 (default): {MIXED}" in text.splitlines()


def test_the_mirror_reads_the_old_grades_from_the_other_store(seven: Path) -> None:
    """HEAD~2 -> HEAD~4: B (older) never graded the Runs HEAD~3 added; A's store keeps
    their Grades of B's version (they were graded with `mean` at HEAD~3)."""
    split = group(diff_json(seven, "HEAD~2", "HEAD~4"), "mumble-1")["split"]
    assert (split["grader"]["runs"], split["grader"]["of"], split["grader_change"]) == (
        15, 15, "min → mean")
    assert split["grader"]["mean_delta"] == pytest.approx(4 / 15)


def test_log_says_the_same_and_lists_the_readme_commit_as_such(seven: Path) -> None:
    res = smevals("log", EVAL, "--format", "json", cwd=seven)
    assert res.code == 0, res.err
    commits = {c["subject"]: c for c in json.loads(res.out)["commits"]}
    assert list(commits) == list(reversed(SUBJECTS))
    rows = {r["model"]: r for r in commits["scoring: mean -> min"]["rows"]}
    mumble = rows["mumble-1"]
    assert mumble["marks"] == ["grader"]
    assert mumble["changes"][1:] == [ONLY_GRADER]
    assert mumble["split"]["carried_by"] == "grader"
    assert all(r["split"] is None for c in commits.values() for r in c["rows"]
               if c["subject"] != "scoring: mean -> min")
    readme = commits["README edited"]
    assert (readme["rows"], readme["evals"], readme["other_files"]) == (
        [], [], [f"{EVAL}/README.md"])
    text = smevals("log", EVAL, cwd=seven).out
    assert f"    changed: {ONLY_GRADER}" in text.splitlines()
    block = text.split("\n\n")[2].splitlines()
    assert block[0].endswith("  README edited  (t)")
    assert block[1:] == [f"  only files that change no figure or result changed: {EVAL}/README.md"]
    # the sparkline leaves the README commit out: one mark per commit that changed figures
    assert re.search(r"default x mumble-1 +··▁▂▂▂  ", text), text


def test_no_interval_leaves_the_range_of_a_score(seven: Path) -> None:
    text = smevals("log", EVAL, cwd=seven).out
    intervals = [(float(a), float(b)) for a, b in re.findall(r"\[(-?[\d.]+), (-?[\d.]+)\]", text)]
    assert intervals and all(0 <= a <= b <= 1 for a, b in intervals), intervals
    assert "score 0.17 ±0.11 [0.00, 0.39]" in text             # was [-0.05, 0.39]
    assert "score 0.83 ±0.11 [0.61, 1.00]" in text             # was [0.61, 1.05]
    assert ("Intervals are 95%: a score's is its mean ± 1.96 standard errors, clipped to "
            "[0, 1] (none over a single score); a pass rate's is Wilson's.") in text
    doc = json.loads(smevals("log", EVAL, "--format", "json", cwd=seven).out)
    one = [r for c in doc["commits"] for r in c["rows"] if r["scored"] == 1]
    assert all(r["mean_ci"] is None for r in one)
    assert all(0 <= r["mean_ci"][0] <= r["mean_ci"][1] <= 1
               for c in doc["commits"] for r in c["rows"] if r["mean_ci"])


def test_log_n_says_what_it_lists(seven: Path) -> None:
    assert smevals("log", EVAL, "-n", "3", cwd=seven).out.splitlines()[0] == (
        f"The newest 3 commits that changed {EVAL} or its results (-n 3; older ones are not "
        "listed), of 7 commits in the range.")
    assert smevals("log", EVAL, "-n", "10", cwd=seven).out.splitlines()[0] == (
        f"7 commits changed {EVAL} or its results (of 7 commits in the range), newest first.")


# --- a change made only of new Runs is the evidence's ------------------------------------


@pytest.fixture(scope="module")
def new_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """HEAD~2: large passes its 4 Tasks. HEAD~1: the grader's description edited (a new
    version, the same verdicts) and every Run regraded. HEAD: 12 new Runs of large that
    fail."""
    repo = tmp_path_factory.mktemp("newruns") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    b = Builder(make_qa(repo / "qa"))
    tasks = ("alpha", "beta", "gamma", "delta")
    for task in tasks:
        b.run(f"pass-{task}", task, "large")
        b.grade(f"pass-{task}", "pass", 1.0)
    commit(repo, "large passes")
    write(repo / "qa" / "graders" / "default.yaml", "description: reworded\n" + GRADER_V1)
    b.ev = load_eval(b.root, cached=False)
    for task in tasks:
        b.grade(f"pass-{task}", "pass", 1.0)
    commit(repo, "grader reworded, regraded")
    for i in range(12):
        b.run(f"fail-{i}", tasks[i % 4], "large", sample=1 + i)
        b.grade(f"fail-{i}", "fail", 0.0)
    commit(repo, "new runs that fail")
    return repo


def test_new_runs_alone_are_a_drop_of_the_evidence(new_runs: Path) -> None:
    res = smevals("diff", "HEAD~1", "HEAD", "qa", "--format", "json", cwd=new_runs)
    (large,) = json.loads(res.out)["evals"][0]["groups"]
    assert (large["verdict"], large["split"]) == ("significant drop", None)


def test_under_a_new_grader_version_new_runs_are_still_the_evidences(new_runs: Path) -> None:
    doc = json.loads(smevals("diff", "HEAD~2", "HEAD", "qa", "--format", "json",
                             cwd=new_runs).out)
    (large,) = doc["evals"][0]["groups"]
    split = large["split"]
    assert large["verdict"] == "grader: no significant change; evidence: significant drop"
    assert (split["carried_by"], split["grader_change"]) == (
        "evidence", "graders/default.yaml changed")
    assert (split["grader"]["runs"], split["grader"]["mean_delta"]) == (4, 0.0)
    assert (split["evidence"]["runs_a"], split["evidence"]["runs_b"]) == (4, 16)
    assert split["evidence"]["ci"][1] < 0 and split["evidence"]["p"] < 0.05
    assert split["text"] == (
        "score -0.75: from the evidence (-0.75, significant); grader effect +0.00 on the same "
        "4 Runs, graders/default.yaml changed, not significant; pass rate -75.0 pts: from the "
        "evidence (-75.0 pts, significant); grader effect +0.0 pts on the same 4 Runs, not "
        "significant")
    gate = smevals("diff", "HEAD~2", "HEAD", "qa", "--fail-on-regression=significant",
                   cwd=new_runs)
    assert gate.code == 1
    assert gate.err == ("Error: regression:\n"
                        "  qa: large (default) dropped significantly (alpha 0.05)\n")
