"""Gates never pass on missing evidence, and one rule says when a Task passes: in the
user's flow (a git repository, a commit, an edit, then `diff` and `report` gates)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from smevals.site import jsdata
from tests.helpers import make_eval, run_cli
from tests.helpers.judges import answer_with, judge_eval

KEYED = {"one": "prompt: hello one\ngrading:\n  expected: says\n",
         "two": "prompt: hello two\ngrading:\n  expected: says\n"}
BY_KEY = {"default": "checks:\n  - checker: contains\n    value: {task: expected}\n"}


def commit(repo: Path, message: str) -> None:
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", message], check=True)


def repo_with(tmp_path: Path, **eval_kw: object) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    ev = make_eval(repo / "ev", **eval_kw)  # type: ignore[arg-type]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo, ev


def test_an_answer_key_edited_and_not_graded_fails_every_gate(tmp_path: Path) -> None:
    repo, ev = repo_with(tmp_path, tasks=KEYED, graders=BY_KEY)
    assert run_cli("run", "ev", "-n", "3", "-g", cwd=repo).code == 0
    commit(repo, "graded")
    task = ev / "tasks" / "one.yaml"
    task.write_text(task.read_text().replace("expected: says", "expected: nope"))

    res = run_cli("diff", "HEAD", "--format", "json", "--fail-on-regression", cwd=repo)
    assert res.code == 1, res.err
    doc = json.loads(res.out)
    (entry,) = doc["evals"]
    (group,) = entry["groups"]
    version = entry["version_b"]
    assert group["left_out"] == {"a": {"ungraded": 0, "errored": 0, "stale": 0},
                                 "b": {"ungraded": 3, "errored": 0, "stale": 0}}
    assert (group["a"]["runs"], group["b"]["runs"]) == (6, 3)
    reason = (f"incomplete evidence: ev: m1 (default): B counts 3 graded Run(s) where A counted "
              f"6: 3 Runs of B have no Grade of version {version} for their current answer "
              "keys; run `smevals grade`")
    assert doc["regression"] == {"mode": "any", "tripped": True, "reasons": [reason],
                                 "incomplete": [reason], "allow_incomplete": False}

    res = run_cli("diff", "HEAD", "--fail-on-regression", cwd=repo)
    assert (res.code, res.err) == (1, f"Error: gate failed:\n  {reason}\n")
    assert ("- Ungraded Runs left out (no Grade of the side's grader version and answer "
            "keys): A 0; B 3\n") in res.out
    assert ("| config | model | ungraded A | ungraded B | errored A | errored B | stale A "
            "| stale B |\n|---|---|---|---|---|---|---|---|\n"
            "| default | m1 | 0 | 3 | 0 | 0 | 0 | 0 |\n") in res.out
    assert run_cli("diff", "HEAD", "--fail-on-regression", "--allow-incomplete",
                   cwd=repo).code == 0
    assert run_cli("diff", "HEAD", cwd=repo).code == 0           # no gate, no failure

    res = run_cli("report", "ev", "--min-pass-rate", "0", cwd=repo)
    assert (res.code, res.err) == (1, (
        "Error: gate failed:\n  incomplete evidence: ev: m1 (default): 3 Runs have no Grade "
        f"of version {version} for their current answer keys; run `smevals grade`\n"))
    assert run_cli("report", "ev", "--min-pass-rate", "0", "--allow-incomplete",
                   cwd=repo).code == 0
    res = run_cli("report", "ev", "--fail-under", "0", "--allow-incomplete", "--json",
                  cwd=repo)
    assert json.loads(res.out)["gates"]["allow_incomplete"] is True

    assert run_cli("grade", "ev", cwd=repo).code == 1                 # task one now fails
    res = run_cli("diff", "HEAD", "--fail-on-regression=flip", cwd=repo)
    assert (res.code, res.err) == (1, "Error: regression:\n"
                                      "  ev: one / default / m1 went pass -> fail\n")
    assert run_cli("report", "ev", "--min-pass-rate", "0", cwd=repo).code == 0


def test_errored_grades_of_b_fail_the_gates(tmp_path: Path, fake_openai) -> None:
    answer_with(fake_openai, lambda user: {"reason": "fine", "pass": True})
    repo = tmp_path / "repo"
    ev = judge_eval(repo / "ev", fake_openai, "  - checker: llm_judge\n    rubric: Polite?\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert run_cli("run", str(ev), "-g", cwd=repo).code == 0
    commit(repo, "graded")
    answer_with(fake_openai, lambda user: "no verdict here")
    assert run_cli("regrade", str(ev), "--no-judge-cache", cwd=repo).code == 2

    res = run_cli("diff", "HEAD", "--fail-on-regression", cwd=repo)
    assert res.code == 1, res.both
    assert res.err == (
        "Error: gate failed:\n  incomplete evidence: ev: m1 (default): B counts 0 graded "
        "Run(s) where A counted 2: 2 Runs of B have an errored Grade (no verdict from a judge "
        "or webhook); run `smevals grade` to try again\n")
    assert "| default | m1 | 0 | 0 | 0 | 2 | 0 | 0 |\n" in res.out
    res = run_cli("report", str(ev), "--fail-under", "0", cwd=repo)
    assert (res.code, res.err) == (1, (
        "Error: gate failed:\n  incomplete evidence: ev: m1 (default): 2 Runs have an errored "
        "Grade (no verdict from a judge or webhook); run `smevals grade` to try again\n"
        "  no graded Runs to check the gates against\n"))


def test_errored_grades_give_the_same_exit_code_from_run_g_grade_and_regrade(
        tmp_path: Path, cli, fake_openai) -> None:
    """Runs made without grading, a judge that gives no verdict: `run -n 1 -g` makes no Run
    but grades the ungraded ones, and exits 2 as `grade` and `regrade` do; a Run it makes
    is graded once (its errored Grade is not asked again by the same command)."""
    answer_with(fake_openai, lambda user: "no verdict here")
    ev = judge_eval(tmp_path / "ev", fake_openai, "  - checker: llm_judge\n    rubric: r\n")
    assert cli("run", str(ev), "-t", "one").code == 0
    res = cli("run", str(ev), "-t", "one", "-n", "1", "-g")
    assert res.code == 2, res.both
    assert "(no current Grade) ... grade: error\n" in res.out
    assert res.err == ("Error: 1 Grade(s) have no verdict (outcome error: a judge or webhook "
                       "could not answer); `smevals grade` tries them again\n")
    assert [cli(command, str(ev), "-t", "one").code for command in ("grade", "regrade")] == [2, 2]
    asked = len(fake_openai.requests)
    res = cli("run", str(ev), "-t", "two", "-g")       # a new Run: graded once, not again
    assert res.code == 2, res.both
    assert res.err.startswith("Error: 1 Grade(s) have no verdict")
    assert len(fake_openai.requests) == asked + 1


SAMPLED = """#!/bin/sh
printf '%s says: %s (sample %s)\\n' "$SMEVALS_MODEL" "$SMEVALS_PROMPT" "$SMEVALS_SAMPLE"
"""


def test_one_task_pass_rule_in_diff_and_junit(tmp_path: Path) -> None:
    """Each task has three Runs; a grader edit makes one Run of each fail (2 of 3 pass)."""
    repo, ev = repo_with(tmp_path, files={"configs/echo.sh": SAMPLED})
    assert run_cli("run", "ev", "-n", "3", "-g", cwd=repo).code == 0
    commit(repo, "all pass")
    samples = sorted({line.rsplit("sample ", 1)[1].strip().rstrip(")") for line in
                      (p.read_text() for p in (ev / "results").rglob("output.txt"))})
    assert len(samples) == 3
    (ev / "graders" / "default.yaml").write_text(
        f"checks:\n  - checker: not_contains\n    value: 'sample {samples[-1]})'\n")
    assert run_cli("grade", "ev", cwd=repo).code == 1

    codes = {}
    for rule in ("majority", "all", "any"):
        res = run_cli("diff", "HEAD", "--fail-on-regression=flip", "--task-pass", rule,
                      "--format", "json", cwd=repo)
        doc = json.loads(res.out)
        codes[rule] = (res.code, doc["task_pass"],
                       [(f["task"], f["direction"]) for f in doc["evals"][0]["flips"]])
    assert codes == {"majority": (0, "majority", []), "any": (0, "any", []),
                     "all": (1, "all", [("one", "pass->fail"), ("two", "pass->fail")])}
    text = run_cli("diff", "HEAD", "--task-pass", "all", cwd=repo).out
    assert "a task passes when every one of its Runs passes (--task-pass all).\n" in text
    commit(repo, "regraded")                    # the site's diff page: the same rule
    for rule, flips in (("majority", []), ("all", [("one", "pass->fail"), ("two", "pass->fail")])):
        built = run_cli("build", "ev", "-o", str(tmp_path / rule), "--diff", "HEAD~1", "HEAD",
                        "--task-pass", rule, cwd=repo)
        assert built.code == 0, built.both
        page = jsdata.decode((tmp_path / rule / "data" / "ev" / "diff.js").read_bytes())[1]
        assert [(f["task"], f["direction"]) for f in page["diff"]["flips"]] == flips

    junit = run_cli("report", "ev", "--format", "junit", cwd=repo).out
    assert 'failures="0" errors="0" skipped="0"' in junit
    assert "<system-out>2/3 runs passed (flaky); --task-pass majority\n" in junit
    junit = run_cli("report", "ev", "--format", "junit", "--task-pass", "all", cwd=repo).out
    assert '<testsuites name="smevals" tests="2" failures="2"' in junit
    assert 'message="2/3 runs passed (flaky); --task-pass all"' in junit
    doc = json.loads(run_cli("report", "ev", "--json", "--task-pass", "all", cwd=repo).out)
    assert doc["task_pass"] == "all"
    assert [(t["task"], t["passed"], t["task_passed"])
            for t in doc["evals"][0]["leaderboard"][0]["tasks"]] == [("one", 2, False),
                                                                   ("two", 2, False)]
    res = run_cli("report", "ev", "--task-pass", "most", cwd=repo)
    assert res.code == 2 and "'most' is not one of 'majority', 'all', 'any'" in res.err
