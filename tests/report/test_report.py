"""`smevals report` end to end: every format against golden files, counts, choices, stale
Runs, filters, gates, --rev, and every bad input."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import make_eval, write
from tests.helpers.golden import smevals
from tests.helpers.qa import OLD_VERSION, Builder, make_qa

FORMATS = [("report.md", ["--by-task"]), ("report.json", ["--format", "json"]),
           ("report.csv", ["--format", "csv"]), ("report.xml", ["--format", "junit"])]


@pytest.mark.parametrize(("name", "args"), FORMATS)
def test_every_format_matches_its_golden_file(qa: Path, golden, name: str, args: list[str]):
    res = smevals("report", "qa", *args, cwd=qa.parent)
    assert (res.code, res.err) == (0, "")
    golden(name, res.out)


def test_json_shape_and_counts(qa: Path) -> None:
    doc = json.loads(smevals("report", "qa", "--json", cwd=qa.parent).out)
    (ev,) = doc["evals"]
    assert doc["format"] == 1 and doc["gates"]["passed"] is True
    s = ev["summary"]
    assert (s["runs"], s["graded"], s["passed"], s["failed"]) == (21, 17, 11, 6)
    assert (s["ungraded"], s["older_version_only"], s["failed_runs_excluded"],
            s["stale_excluded"]) == (2, 1, 1, 1)
    board = [(g["rank"], g["model"], g["config"], g["runs"]) for g in ev["leaderboard"]]
    # tiny's one Grade has no score, so the leaderboard ranks by pass rate
    assert ev["ranked_by"] == "pass_rate"
    board = [(g["rank"], g["model"], g["config"], g["runs"]) for g in ev["leaderboard"]]
    assert board == [(1, "medium", "default", 1), (1, "small", "alt", 1),
                     (3, "large", "default", 4), (4, "small", "default", 10),
                     (5, "tiny", "default", 1)]
    reasons = sorted((e["task"], e["model"], e["reason"]) for e in ev["excluded"])
    assert reasons == [("alpha", "small", "stale"), ("beta", "tiny", "failed"),
                       ("delta", "tiny", "older_version"), ("gamma", "tiny", "ungraded")]
    (rep,) = ev["repeats"]
    assert [(c["task"], c["class"]) for c in rep["cells"]] == [
        ("alpha", "stable_pass"), ("beta", "flaky"), ("gamma", "stable_fail")]
    assert [round(k["pass_at_k"], 4) for k in rep["k"]] == [0.5556, 0.6667, 0.6667]
    assert [round(k["pass_hat_k"], 4) for k in rep["k"]] == [0.5556, 0.4444, 0.3333]


def test_json_flag_is_format_json(qa: Path) -> None:
    one = smevals("report", "qa", "--json", cwd=qa.parent)
    two = smevals("report", "qa", "--format", "json", cwd=qa.parent)
    assert one.out == two.out and one.code == 0


def test_junit_has_one_case_per_task_config_model(qa: Path) -> None:
    root = ET.fromstring(smevals("report", "qa", "--format", "junit", cwd=qa.parent).out)
    cases = {(c.get("classname"), c.get("name")): [x.tag for x in c] for c in root.iter("testcase")}
    assert root.get("tests") == "14" and root.get("failures") == "3"
    assert cases[("qa / default / small", "beta")] == ["system-out"]    # 2 of 3: a majority
    assert cases[("qa / default / small", "alpha")] == []
    assert cases[("qa / default / tiny", "beta")] == ["error"]          # the runner failed
    assert cases[("qa / default / tiny", "gamma")] == ["skipped"]       # ungraded
    assert ("qa / alt / small", "alpha") not in cases                    # stale: left out
    strict = ET.fromstring(smevals("report", "qa", "--format", "junit", "--task-pass", "all",
                                   cwd=qa.parent).out)
    assert strict.get("failures") == "4"
    (beta,) = [c for c in strict.iter("testcase")
               if (c.get("classname"), c.get("name")) == ("qa / default / small", "beta")]
    assert [(x.tag, x.get("message")) for x in beta] == [
        ("failure", "2/3 runs passed (flaky); --task-pass all")]


def test_include_stale_counts_stale_runs(qa: Path) -> None:
    out = smevals("report", "qa", "--include-stale", cwd=qa.parent).out
    assert "- Graded: 18 runs (6 failed, 2 ungraded)" in out
    assert ("- Stale: 1 run(s) made from an older task, config or runner included "
            "(--include-stale)") in out
    assert "small   (alt, 2 runs)" in out and "0.55 ±0.05" in out


def test_editing_a_task_makes_its_runs_stale(qa: Path) -> None:
    write(qa / "tasks" / "alpha.yaml", "prompt: What is alpha, really?\n")
    out = smevals("report", "qa", cwd=qa.parent).out
    assert ("- Stale: 7 run(s) left out (task edited: 7; --include-stale to include them)"
            in out)
    assert "- Graded: 11 runs" in out


def test_answer_key_change_makes_grades_out_of_date_but_not_runs(qa: Path) -> None:
    write(qa / "tasks" / "delta.yaml", "prompt: What is 2 + 2?\ngrading:\n  answer: four\n")
    out = smevals("report", "qa", cwd=qa.parent).out
    assert "- Graded: 15 runs (6 failed, 4 ungraded)" in out
    assert "- ⚠ 3 run(s) graded only by an older version of grader 'default'" in out
    assert "Stale: 1 run(s)" in out


def test_removed_config_and_edited_runner_make_runs_stale(qa: Path) -> None:
    (qa / "configs" / "alt.yaml").unlink()
    assert "- Stale: 2 run(s)" in smevals("report", "qa", cwd=qa.parent).out
    write(qa / "configs" / "run.sh", "#!/bin/sh\necho changed\n", executable=True)
    assert "- Stale: 20 run(s)" in smevals("report", "qa", cwd=qa.parent).out


def test_grader_version_prefix_and_any_version(qa: Path) -> None:
    old = smevals("report", "qa", "--grader-version", OLD_VERSION[:6], cwd=qa.parent).out
    assert "- Grader: default (version 012345, chosen with --grader-version)" in old
    assert "- Graded: 1 runs (0 failed, 18 ungraded)" in old
    assert "1. 1.00  tiny  (default, 1 run)" in old
    anyv = smevals("report", "qa", "--any-version", cwd=qa.parent).out
    assert "- Graded: 18 runs (6 failed, 1 ungraded)" in anyv
    assert ("- ⚠ 1 of 18 grades came from an older version of grader 'default' - consider "
            "--regrade") in anyv


def test_no_current_grades_says_which_versions_exist(tmp_path: Path) -> None:
    b = Builder(make_qa(tmp_path / "qa"))
    b.run("r", "alpha", "small")
    b.grade("r", "pass", 1.0, version=OLD_VERSION)
    out = smevals("report", "qa", cwd=tmp_path).out
    assert "No graded Runs." in out
    assert "- Graded: 0 runs (0 failed, 1 ungraded)" in out
    assert (f"versions in the store: {OLD_VERSION} (1) (see --grader-version and "
            "--any-version)") in out


def test_filters_narrow_the_rows(qa: Path) -> None:
    res = smevals("report", "qa", "-m", "small", "-c", "default", "-t", "alpha", "-t", "beta",
                  cwd=qa.parent)
    assert res.code == 0
    assert "- Filters: -t alpha -t beta -c default -m small" in res.out
    assert "- Graded: 6 runs (1 failed, 0 ungraded)" in res.out
    assert ("1. 0.70 ±0.12  small  (default, 6 runs, 1 fail)  pass 83% (5/6), 95% CI "
            "[0.44, 0.97]") in res.out


def test_filter_matching_nothing_is_an_error(qa: Path) -> None:
    res = smevals("report", "qa", "-m", "nobody", cwd=qa.parent)
    assert res.code == 2
    assert res.err == "Error: no Runs match -m nobody in qa/results\n"


def test_gates_exit_1_and_still_print_the_report(qa: Path) -> None:
    res = smevals("report", "qa", "--fail-under", "0.56", "--min-pass-rate", "70%",
                  cwd=qa.parent)
    assert res.code == 1 and res.out.startswith("# qa\n")
    assert res.err == (
        "Error: gate failed:\n"
        "  incomplete evidence: qa: tiny (default): 2 Runs have no Grade of version "
        "9d56298ec71e; run `smevals grade`\n"
        "  qa: small (default): mean score 0.55 over 10 run(s) is below --fail-under 0.56\n"
        "  qa: small (default): pass rate 60.0% (6/10) is below --min-pass-rate 70.0%\n"
        "  qa: tiny (default): no score over 1 run(s) is below --fail-under 0.56\n"
        "  qa: tiny (default): pass rate 0.0% (0/1) is below --min-pass-rate 70.0%\n")
    ok = smevals("report", "qa", "-m", "large", "-m", "small", "--fail-under", "0.55",
                 "--min-pass-rate", "0.6", cwd=qa.parent)
    assert (ok.code, ok.err) == (0, "")


def test_gates_in_json(qa: Path) -> None:
    res = smevals("report", "qa", "--json", "--min-pass-rate", "0.5", "-m", "tiny",
                  cwd=qa.parent)
    assert res.code == 1
    gates = json.loads(res.out)["gates"]
    assert gates == {"fail_under": None, "min_pass_rate": 0.5, "allow_incomplete": False,
                     "passed": False, "failures": [
        "incomplete evidence: qa: tiny (default): 2 Runs have no Grade of version "
        "9d56298ec71e; run `smevals grade`",
        "qa: tiny (default): pass rate 0.0% (0/1) is below --min-pass-rate 50.0%"]}
    res = smevals("report", "qa", "--json", "--min-pass-rate", "0.5", "-m", "tiny",
                  "--allow-incomplete", cwd=qa.parent)
    assert json.loads(res.out)["gates"]["failures"] == [
        "qa: tiny (default): pass rate 0.0% (0/1) is below --min-pass-rate 50.0%"]


@pytest.mark.parametrize(("args", "message"), [
    (["--min-pass-rate", "1.5"], "--min-pass-rate: '1.5' is outside 0..1 (use 0.8 or 80%)"),
    (["--min-pass-rate", "most"], "--min-pass-rate: 'most' is not a rate (use 0.8 or 80%)"),
    (["--fail-under", "abc"], "--fail-under: 'abc' is not a number"),
    (["--fail-under", "nan"], "--fail-under: 'nan' is not a finite number"),
    (["-g", "nope"], "qa: no grader named 'nope' - available graders: default"),
    (["--grader-version", "01", "--any-version"],
     "--grader-version and --any-version exclude each other"),
])
def test_bad_input_exits_2(qa: Path, args: list[str], message: str) -> None:
    res = smevals("report", "qa", *args, cwd=qa.parent)
    assert (res.code, res.out, res.err) == (2, "", f"Error: {message}\n")


def test_bad_format_exits_2(qa: Path) -> None:
    res = smevals("report", "qa", "--format", "yaml", cwd=qa.parent)
    assert res.code == 2 and "Invalid value for '--format'" in res.err
    res = smevals("report", "qa", "--json", "--format", "csv", cwd=qa.parent)
    assert res.code == 2 and "--json and --format exclude each other" in res.err


def test_no_runs_and_not_an_eval_exit_2(tmp_path: Path) -> None:
    make_eval(tmp_path / "empty")
    res = smevals("report", "empty", cwd=tmp_path)
    assert (res.code, res.err) == (2, "Error: no Runs in empty/results\n")
    res = smevals("report", "nowhere", cwd=tmp_path)
    assert (res.code, res.err) == (2, "Error: nowhere: no such file or folder\n")


def test_output_file(qa: Path) -> None:
    res = smevals("report", "qa", "--format", "csv", "-o", "out.csv", cwd=qa.parent)
    assert (res.code, res.out, res.err) == (0, "", "Wrote out.csv\n")
    assert (qa.parent / "out.csv").read_text().startswith("eval,task,config,model,")


def test_a_suite_reports_each_eval(qa: Path) -> None:
    make_eval(qa.parent / "other", name="other")
    out = smevals("report", ".", cwd=qa.parent).out
    # a Suite: first one summary line per Eval x config x model, then each Eval as before
    assert out.startswith("""\
# Summary: 2 Evals

| Eval | config | model | runs | score | pass rate | 95% CI |
|---|---|---|---|---|---|---|
| other | - | - | 0 | - | no graded Runs | - |
| qa | default | medium | 1 | 0.60 | 100% (1/1) | [0.21, 1.00] |
| qa | alt | small | 1 | 0.60 | 100% (1/1) | [0.21, 1.00] |
| qa | default | large | 4 | 0.75 ±0.16 | 75% (3/4) | [0.30, 0.95] |
| qa | default | small | 10 | 0.55 ±0.12 | 60% (6/10) | [0.31, 0.83] |
| qa | default | tiny | 1 | - | 0% (0/1) | [0.00, 0.79] |

# other
""") and "\n\n# qa\n" in out
    assert "# other\n\n- Grader: default" in out and "No graded Runs." in out


# --- --rev -----------------------------------------------------------------------------


def _rows(text: str) -> list[dict[str, Any]]:
    rows = json.loads(text)["evals"][0]["rows"]
    return [{k: v for k, v in r.items() if k != "run_dir"} for r in rows]


def test_rev_reads_the_store_and_grader_as_committed(repo: Path, qa: Path) -> None:
    at = smevals("report", "qa", "--rev", "HEAD~2", "--json", cwd=repo)
    assert at.code == 0, at.err
    here = smevals("report", "qa", "--json", cwd=qa.parent)
    assert _rows(at.out) == _rows(here.out)            # same content, same ids
    ev = json.loads(at.out)["evals"][0]
    assert ev["rev"] == "HEAD~2" and ev["store"] == "HEAD~2:qa/results"
    assert ev["grader"]["version"] == json.loads(here.out)["evals"][0]["grader"]["version"]
    now = json.loads(smevals("report", "qa", "--json", cwd=repo).out)["evals"][0]
    assert now["grader"]["version"] != ev["grader"]["version"]      # edited in state 2
    assert now["summary"]["graded"] == 20


def test_rev_markdown_names_the_revision(repo: Path) -> None:
    out = smevals("report", "qa", "--rev", "HEAD~1", cwd=repo).out
    assert "- Revision: HEAD~1 (commit " in out
    assert "- Graded: 17 runs (4 failed, 2 ungraded)" in out


def test_rev_errors_exit_2(repo: Path, qa: Path) -> None:
    res = smevals("report", "qa", "--rev", "nope", cwd=repo)
    assert (res.code, res.err) == (2, "Error: unknown revision 'nope'\n")
    res = smevals("report", "qa", "--rev", "HEAD~3", cwd=repo)
    assert res.code == 2 and res.err.startswith("Error: no store at qa/results in revision "
                                                "HEAD~3 (")
    res = smevals("report", "qa", "--rev", "HEAD", cwd=qa.parent)
    assert res.code == 2 and "is not inside a git repository" in res.err


def test_rev_with_an_eval_absent_at_that_revision(repo: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True)
    make_eval(copy / "fresh")
    res = smevals("report", "fresh", "--rev", "HEAD", cwd=copy)
    assert res.code == 2 and res.err.startswith("Error: fresh: no Eval at revision HEAD (")


# --- real Runs and Grades --------------------------------------------------------------


def test_report_on_real_runs_and_grades(tmp_path: Path) -> None:
    runner = "#!/bin/sh\nif [ \"$SMEVALS_SAMPLE\" = 1 ] && [ \"$SMEVALS_MODEL\" = b ]; then\n" \
             "  echo nope; else echo \"$SMEVALS_MODEL says yes\"; fi\n"
    make_eval(tmp_path / "ev", files={"configs/echo.sh": runner},
              graders={"default": "checks:\n  - checker: contains\n    value: 'yes'\n"})
    made = smevals("run", "ev", "-m", "a", "-m", "b", "-n", "2", "-g", cwd=tmp_path)
    assert made.code == 1                     # b fails its second sample
    doc = json.loads(smevals("report", "ev", "--json", cwd=tmp_path).out)["evals"][0]
    assert (doc["summary"]["graded"], doc["summary"]["passed"]) == (8, 6)
    flaky = {(r["model"], r["flaky"]) for r in doc["repeats"]}
    assert flaky == {("a", 0), ("b", 2)}
    res = smevals("report", "ev", "--min-pass-rate", "0.9", cwd=tmp_path)
    assert res.code == 1 and "b (default): pass rate 50.0% (2/4)" in res.err
