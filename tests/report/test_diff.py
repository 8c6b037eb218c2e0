"""`smevals diff` end to end on a git history of the qa Eval (see builder.history):
HEAD~3 the Eval without a store, HEAD~2 state 1, HEAD~1 grader edited and every Run
regraded, HEAD new Runs, a new task and a new model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import make_eval
from tests.report.builder import GRADER_V1, write
from tests.report.conftest import smevals


def diff_json(repo: Path, *args: str) -> dict[str, Any]:
    res = smevals("diff", *args, "--format", "json", cwd=repo)
    assert res.code == 0, res.err
    return json.loads(res.out)


def test_regrade_diff_matches_golden_files(repo: Path, golden) -> None:
    res = smevals("diff", "HEAD~2", "HEAD~1", "qa", "--show-output", cwd=repo)
    assert (res.code, res.err) == (0, "")
    golden("diff.md", res.out)
    golden("diff.json", smevals("diff", "HEAD~2", "HEAD~1", "qa", "--format", "json",
                                cwd=repo).out)


def test_regrade_diff_lists_the_exact_flips_version_change_and_statistics(repo: Path) -> None:
    (ev,) = diff_json(repo, "HEAD~2", "HEAD~1", "qa")["evals"]
    flips = [(f["task"], f["config"], f["model"], f["direction"], f["cause"])
             for f in ev["flips"]]
    assert flips == [("beta", "default", "large", "pass->fail", "regraded"),
                     ("gamma", "default", "small", "fail->pass", "regraded")]
    assert ev["version_changed"] and ev["same_runs"]
    assert ev["explanation"].startswith("The same 17 Runs are counted on both sides and only "
                                        "their Grades differ: regrading with grader version ")
    groups = {(g["config"], g["model"]): g for g in ev["groups"]}
    large = groups[("default", "large")]
    assert large["delta"]["mean"] == pytest.approx(-0.275)
    assert large["delta"]["pass_rate"] == pytest.approx(-0.25)
    paired = large["paired"]
    assert (paired["tasks"], paired["scored"], paired["regressions"], paired["fixes"],
            paired["p"]) == (4, 4, 1, 0, 1.0)
    assert paired["ci"][1] < 0 and paired["score_significant"]
    assert not paired["pass_significant"]
    # the same Runs regraded: the drop is the grader's, never a drop of the model
    assert large["verdict"] == "grader: significant drop; evidence: no significant change"
    split = large["split"]
    assert (split["carried_by"], split["grader"]["runs"], split["evidence"]["same_runs"]) == (
        "grader", 4, True)
    assert split["grader"]["mean_delta"] == pytest.approx(-0.275)
    assert split["text"].startswith("score -0.28: all from the grader (-0.28 on the same 4 "
                                    "Runs, Checks renamed: contains → answered)")
    small = groups[("default", "small")]
    assert (small["paired"]["regressions"], small["paired"]["fixes"]) == (0, 1)
    assert small["verdict"] == "grader: no significant change; evidence: no significant change"
    flip = ev["flips"][0]
    assert flip["a"][0]["run_id"] == flip["b"][0]["run_id"]
    assert flip["a"][0]["grade_id"] != flip["b"][0]["grade_id"]
    assert (flip["a"][0]["outcome"], flip["b"][0]["outcome"]) == ("pass", "fail")


def test_new_runs_tasks_and_models_are_listed(repo: Path, golden) -> None:
    res = smevals("diff", "HEAD~1", "HEAD", "qa", cwd=repo)
    assert res.code == 0
    golden("diff-added.md", res.out)
    (ev,) = diff_json(repo, "HEAD~1", "HEAD", "qa")["evals"]
    assert ev["flips"] == [] and not ev["version_changed"] and not ev["same_runs"]
    assert (len(ev["added"]["runs"]), ev["added"]["tasks"], ev["added"]["models"]) == (
        3, ["epsilon"], ["huge"])
    assert ev["removed"] == {"runs": [], "tasks": [], "models": [], "configs": [],
                             "runs_by_pair": [], "damaged": []}
    assert ev["added"]["runs_by_pair"] == [{"config": "default", "model": "huge", "runs": 1},
                                           {"config": "default", "model": "large", "runs": 2}]
    statuses = {(g["config"], g["model"]): g["status"] for g in ev["groups"]}
    assert statuses[("default", "huge")] == "added"
    reverse = diff_json(repo, "HEAD", "HEAD~1", "qa")["evals"][0]
    assert reverse["removed"]["models"] == ["huge"] and reverse["added"]["runs"] == []


def test_mixed_history_says_which_flips_are_regrades(repo: Path) -> None:
    (ev,) = diff_json(repo, "HEAD~2", "HEAD", "qa")["evals"]
    assert not ev["same_runs"] and ev["version_changed"]
    assert ev["explanation"].endswith("2 of 2 flips are the same Runs regraded.")


def test_defaults_head_against_the_working_tree(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True)
    res = smevals("diff", cwd=copy)
    assert res.code == 0
    assert res.out.startswith("# Diff: HEAD -> working tree\n")
    assert "- Flips: 0 pass -> fail, 0 fail -> pass" in res.out
    write(copy / "qa" / "graders" / "default.yaml", GRADER_V1)     # back to version 1
    (ev,) = json.loads(smevals("diff", "qa", "--format", "json", cwd=copy).out)["evals"]
    assert [(f["task"], f["direction"]) for f in ev["flips"]] == [
        ("beta", "fail->pass"), ("gamma", "pass->fail")]
    assert ev["removed"]["runs"] == []          # Runs stay; only 17 are counted in B now


def test_grader_versions_compare_the_same_runs(repo: Path) -> None:
    old = diff_json(repo, "HEAD~2", "HEAD~1", "qa")["evals"][0]
    v1, v2 = old["version_a"], old["version_b"]
    doc = diff_json(repo, "--grader-versions", v1[:6], v2[:8], "qa")
    assert (doc["mode"], doc["a"]["label"], doc["b"]["label"]) == (
        "grader_versions", f"grader version {v1[:6]}", f"grader version {v2[:8]}")
    (ev,) = doc["evals"]
    assert [f["task"] for f in ev["flips"]] == ["beta", "gamma"]
    assert all(f["cause"] == "regraded" for f in ev["flips"])
    # the two versions' Grades of the same Runs: the change is split as across revisions
    large = next(g for g in ev["groups"] if g["model"] == "large")
    assert large["verdict"] == "grader: significant drop; evidence: no significant change"
    assert large["split"]["grader_change"] == f"grader version {v1[:6]} → {v2[:8]}"
    assert (large["split"]["grader"]["runs"], large["split"]["evidence"]["runs_b"]) == (4, 6)
    at = diff_json(repo, "--grader-versions", v1, v2, "HEAD~1", "qa")
    assert at["a"]["rev"] == "HEAD~1" and at["evals"][0]["same_runs"]


@pytest.mark.parametrize(("args", "code"), [
    (["--fail-on-regression"], 1), (["--fail-on-regression=flip"], 1),
    # large's drop is the grader's (the same Runs regraded), not a significant drop
    (["--fail-on-regression=significant"], 0), (["--fail-on-regression=any", "-m", "small"], 0),
    ([], 0),
])
def test_fail_on_regression(repo: Path, args: list[str], code: int) -> None:
    res = smevals("diff", "HEAD~2", "HEAD~1", "qa", *args, cwd=repo)
    assert res.code == code, res.err


def test_fail_on_regression_reasons(repo: Path) -> None:
    res = smevals("diff", "HEAD~2", "HEAD~1", "qa", "--fail-on-regression", cwd=repo)
    assert res.err == ("Error: regression:\n"
                       "  qa: beta / default / large went pass -> fail\n")
    flip_only = smevals("diff", "HEAD~2", "HEAD~1", "qa", "--fail-on-regression", "flip",
                        "-t", "alpha", "-t", "gamma", cwd=repo)
    assert flip_only.code == 0
    significant = smevals("diff", "HEAD~2", "HEAD~1", "qa", "--fail-on-regression",
                          "significant", "-t", "alpha", "-t", "gamma", cwd=repo)
    assert significant.code == 0, significant.err     # the grader's drop, not the model's


@pytest.mark.parametrize("args", [("--fail-on-regression=bogus", "HEAD~2"),
                                  ("--fail-on-regression", "HEAD~2", "HEAD~1")])
def test_an_unknown_regression_mode_exits_2(repo: Path, args: tuple[str, ...]) -> None:
    res = smevals("diff", *args, "qa", cwd=repo)
    value = args[0].partition("=")[2] or args[1]
    assert (res.code, res.out) == (2, "")
    assert res.err.endswith(f"Error: Invalid value for '--fail-on-regression': '{value}' is not "
                            "one of flip, significant, any (revisions and folders go before "
                            "the option, or write --fail-on-regression=any)\n")


def test_alpha_sets_the_level_and_the_interval(repo: Path) -> None:
    out = smevals("diff", "HEAD~2", "HEAD~1", "qa", "--alpha", "0.5", cwd=repo).out
    assert "| 50% CI of Δ |" in out and "Significance level 0.5:" in out


@pytest.mark.parametrize(("args", "message"), [
    (["nope", "qa"], "unknown revision 'nope'"),
    (["HEAD~2", "HEAD~1", "HEAD", "qa"], "diff compares at most two revisions, got 3"),
    (["HEAD~2", "qa", "--alpha", "0"], "--alpha must be between 0 and 1, got 0"),
    (["HEAD~2", "qa", "--alpha", "1.5"], "--alpha must be between 0 and 1, got 1.5"),
    (["HEAD~2", "qa", "-g", "strict"], "qa: no grader named 'strict' - available graders"),
    (["--grader-versions", "a", "b", "HEAD~1", "HEAD", "qa"],
     "--grader-versions compares two versions on the Runs of one side"),
])
def test_bad_input_exits_2(repo: Path, args: list[str], message: str) -> None:
    res = smevals("diff", *args, cwd=repo)
    assert res.code == 2 and res.out == ""
    assert res.err.startswith(f"Error: {message}"), res.err


def test_bad_format_exits_2(repo: Path) -> None:
    res = smevals("diff", "qa", "--format", "csv", cwd=repo)
    assert res.code == 2 and "Invalid value for '--format'" in res.err


def test_eval_or_store_missing_at_a_revision(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True)
    make_eval(copy / "fresh")
    res = smevals("diff", "fresh", cwd=copy)
    assert (res.code, res.err) == (2, "Error: fresh: no Runs in revision HEAD nor in the "
                                      "working tree\n")


def test_a_revision_without_a_store_is_an_empty_side(repo: Path) -> None:
    (ev,) = diff_json(repo, "HEAD~3", "HEAD", "qa")["evals"]
    assert ev["status"] == "both" and ev["version_a"] == "-"
    assert ev["removed"]["runs"] == [] and len(ev["added"]["runs"]) == 24
    assert {g["status"] for g in ev["groups"]} == {"added"}


def test_outside_git_is_an_error(tmp_path: Path) -> None:
    make_eval(tmp_path / "ev")
    res = smevals("diff", "ev", cwd=tmp_path)
    assert res.code == 2 and "is not inside a git repository" in res.err


def test_grader_versions_that_match_no_grade_exit_2(repo: Path) -> None:
    old = diff_json(repo, "HEAD~2", "HEAD~1", "qa")["evals"][0]
    v1, v2 = sorted((old["version_a"], old["version_b"]))
    res = smevals("diff", "--grader-versions", "aaaa", v2[:6], "qa", cwd=repo)
    assert (res.code, res.out) == (2, "")
    assert res.err == ("Error: qa: no Grade of grader 'default' has version aaaa; versions "
                       f"in qa/results: 0123456789ab, {v1}, {v2}\n")
    both = smevals("diff", "--grader-versions", "aaaa", "bbbb", "qa", cwd=repo)
    assert both.code == 2 and "has version aaaa or bbbb; versions" in both.err
