"""Judge errors (outcome `error`, retried), the judge cache in the store, the same-family
guard, `grade --dry-run`, and what report, diff and verify make of them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.helpers.judges import answer_with, grades, judge_eval, newest

JUDGE = "  - checker: llm_judge\n    rubric: Is it polite?\n"


def _ok(user: str) -> dict[str, object]:
    return {"reason": "fine", "pass": True}


def test_unparseable_verdict_is_an_error_and_the_next_grade_retries(tmp_path: Path, cli,
                                                                    fake_openai) -> None:
    answer_with(fake_openai, lambda user: "I think it passes.")
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev), "-t", "one")
    res = cli("grade", str(ev))
    assert res.code == 2, res.both
    assert "... error\n" in res.out
    assert ("    check 'llm_judge' had no verdict: judge error: unparseable verdict: the "
            "judge's answer holds no JSON object\n") in res.out
    assert "Graded 1 Run(s): 0 pass, 0 fail, 1 error\n" in res.out
    assert "1 of 1 Grade(s) have no verdict" in res.err
    first = newest(ev, "one")
    assert first["outcome"] == "error" and first["score"] is None
    assert first["checks"][0]["error"] is True
    assert not (ev / "results" / "judges").exists()          # an unparsed answer is not cached
    report = cli("report", str(ev))
    assert "- Graded: 0 runs (0 failed, 0 ungraded)\n" in report.out
    assert ("- ⚠ Errors: 1 run(s) whose Grade is an error (a judge or webhook gave no "
            "verdict; neither pass nor fail, left out)") in report.out
    data = json.loads(cli("report", str(ev), "--format", "json").out)
    assert data["evals"][0]["summary"]["errored"] == 1
    answer_with(fake_openai, _ok)
    res = cli("grade", str(ev))
    assert res.code == 0, res.both
    assert "1 Run(s) graded again: their current Grade was an error (no verdict)\n" in res.out
    assert [g["outcome"] for g in grades(ev)["one"]] == ["error", "pass"]
    assert cli("grade", str(ev)).out.startswith("ev: grading 0 Run(s)")


def test_server_errors_are_retried_then_an_error(tmp_path: Path, cli, fake_openai) -> None:
    fake_openai.enqueue(503, {"error": "busy"}, headers={"Retry-After": "0"})
    fake_openai.enqueue(500, {"error": "down"}, headers={"Retry-After": "0"})
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE, extra="  retries: 1\n")
    cli("run", str(ev), "-t", "one")
    res = cli("grade", str(ev))
    assert res.code == 2
    assert "judge error: HTTP 500: {\"error\": \"down\"} (gave up after 2 attempt(s))" in res.out
    assert len(fake_openai.requests) == 2
    fake_openai.enqueue(429, {"error": "slow"}, headers={"Retry-After": "0.1"})
    answer_with(fake_openai, _ok)
    assert cli("grade", str(ev)).code == 0
    kept = json.loads(next(Path(newest(ev, "one")["_dir"]).glob("judge-*.json")).read_text())
    assert kept["calls"][0]["attempts"] == 2


def test_an_unreachable_judge_is_an_error(tmp_path: Path, cli, fake_openai) -> None:
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    fake_openai.close()
    cli("run", str(ev), "-t", "one")
    res = cli("grade", str(ev))
    assert res.code == 2
    assert "judge error: connection refused by 127.0.0.1:" in res.out
    assert newest(ev, "one")["outcome"] == "error"


def test_a_failing_check_makes_a_fail_not_an_error(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: "no json")
    ev = judge_eval(tmp_path / "ev", fake_openai,
                    "  - checker: contains\n    value: absent\n" + JUDGE)
    cli("run", str(ev), "-t", "one")
    assert cli("grade", str(ev)).code == 1
    assert newest(ev, "one")["outcome"] == "fail"


def test_same_family_guard(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, _ok)
    ev = judge_eval(tmp_path / "ev", fake_openai,
                    "  - checker: llm_judge\n    rubric: r\n    judge: {model: openai/gpt-4o}\n")
    cli("run", str(ev), "-t", "one", "-m", "gpt-4.1-mini")
    res = cli("grade", str(ev))
    assert res.code == 1
    assert "    failed check 'llm_judge': judge 'openai/gpt-4o' is of the same" in res.out
    assert newest(ev, "one")["checks"][0]["notes"] == (
        "judge 'openai/gpt-4o' is of the same model family (openai) as the Run's model "
        "'gpt-4.1-mini'; use a judge of another family, or set allow_same_family: true in the "
        "judge block")
    assert fake_openai.requests == []
    grader = ev / "graders" / "default.yaml"
    grader.write_text(grader.read_text().replace("openai/gpt-4o}", "openai/gpt-4o, "
                                                 "allow_same_family: true}"))
    assert cli("grade", str(ev)).code == 0
    assert len(fake_openai.requests) == 1


def test_the_cache_answers_the_same_request_again(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, _ok, usage={"prompt_tokens": 10, "completion_tokens": 2})
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev))
    assert cli("grade", str(ev), "--dry-run").out == (
        "Would grade 2 Run(s); judge calls: 2 (0 from the judge cache, 2 to make)\n")
    assert fake_openai.requests == []
    assert cli("grade", str(ev)).code == 0
    assert len(fake_openai.requests) == 2
    entries = sorted((ev / "results" / "judges").glob("*/*.json"))
    assert len(entries) == 2
    assert cli("regrade", str(ev), "--dry-run").out == (
        "Would grade 2 Run(s); judge calls: 2 (2 from the judge cache, 0 to make)\n")
    # A second grader sharing the judge Check, with no server and no key: from the store.
    fake_openai.close()
    (ev / "graders" / "second.yaml").write_text(
        (ev / "graders" / "default.yaml").read_text() + "  - checker: contains\n    value: one\n")
    res = cli("grade", str(ev), "-g", "second")
    assert "Graded 2 Run(s): 1 pass, 1 fail\n" in res.out, res.both
    second = newest(ev, "one")
    assert second["grader"]["name"] == "second"
    assert second["judge"] == {"calls": 0, "cached": 1, "input_tokens": 0, "output_tokens": 0}
    kept = json.loads((Path(second["_dir"]) / "judge-1-llm-judge.json").read_text())
    assert kept["calls"][0]["cached"] is True
    report = cli("report", str(ev))
    assert ("- Judge: 2 call(s) (0 more answered by the judge cache), 20 input + 4 output "
            "tokens\n") in report.out
    assert cli("verify", str(ev)).out.startswith("OK: 8 object(s) verified")


def test_a_changed_template_makes_new_calls(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, _ok)
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev), "-t", "one")
    cli("grade", str(ev))
    cli("regrade", str(ev))
    assert len(fake_openai.requests) == 1
    grader = ev / "graders" / "default.yaml"
    grader.write_text(grader.read_text() + "    template: 'Rate {{output}} by: {{rubric}}'\n")
    res = cli("grade", str(ev))
    assert "1 Run(s) graded again: they had Grades only from older grader versions" in res.out
    assert len(fake_openai.requests) == 2
    assert fake_openai.requests[1].body["messages"][1]["content"] == (
        "Rate m1 says: hello one\n by: Is it polite?")
    assert cli("regrade", str(ev), "--no-judge-cache").code == 0
    assert len(fake_openai.requests) == 3


def test_a_template_file_is_part_of_the_grader_version(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, _ok)
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE + "    template_file: judge.txt\n")
    (ev / "graders" / "judge.txt").write_text("first {{output}}")
    cli("run", str(ev), "-t", "one")
    cli("grade", str(ev))
    (ev / "graders" / "judge.txt").write_text("second {{output}}")
    res = cli("grade", str(ev))
    assert "1 Run(s) graded again: they had Grades only from older grader versions" in res.out
    assert [r.body["messages"][1]["content"][:6] for r in fake_openai.requests] == \
        ["first ", "second"]


def test_verify_checks_the_judge_cache(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, _ok)
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev), "-t", "one")
    cli("grade", str(ev))
    entry = next((ev / "results" / "judges").glob("*/*.json"))
    os.chmod(entry, 0o644)
    record = json.loads(entry.read_text())
    record["request"]["model"] = "other"
    entry.write_text(json.dumps(record))
    (entry.parent / "stray.txt").write_text("x")
    res = cli("verify", str(ev))
    assert res.code == 1
    rel = f"judges/{entry.parent.name}/{entry.name}"
    assert f"{rel}: not in canonical form (edited by hand?)" in res.out
    assert f"{rel}: its request hashes to " in res.out
    assert (f"judges/{entry.parent.name}/stray.txt: stray entry in the judge cache" in res.out)


def test_replay_backend_runs_offline(tmp_path: Path, cli, fake_openai) -> None:
    ev = judge_eval(tmp_path / "ev", fake_openai,
                    "  - checker: llm_judge\n    name: tone\n    rubric: r\n"
                    "    judge: {backend: replay, responses: answers.jsonl}\n")
    (ev / "graders" / "answers.jsonl").write_text(
        '{"task": "one", "check": "tone", "verdict": {"reason": "kind", "pass": true}}\n'
        '{"task": "two", "answer": "not a verdict"}\n')
    cli("run", str(ev))
    res = cli("grade", str(ev), "-j", "1")
    assert "Graded 2 Run(s): 1 pass, 0 fail, 1 error\n" in res.out, res.both
    assert fake_openai.requests == []
    assert not (ev / "results" / "judges").exists()


def test_no_judge_cache_asks_afresh_but_keeps_the_answers(tmp_path: Path, cli,
                                                          fake_openai) -> None:
    answer_with(fake_openai, _ok)
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev), "-t", "one")
    assert cli("grade", str(ev), "--no-judge-cache").code == 0
    assert len(list((ev / "results" / "judges").glob("*/*.json"))) == 1
    assert cli("regrade", str(ev), "--no-judge-cache").code == 0
    assert len(fake_openai.requests) == 2
    assert cli("regrade", str(ev)).code == 0
    assert len(fake_openai.requests) == 2
    assert newest(ev, "one")["judge"]["cached"] == 1


def test_run_then_grade_reports_errored_grades(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: "no verdict here")
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    res = cli("run", str(ev), "-t", "one", "-g")
    assert res.code == 2, res.both
    assert "    grade: error\n" in res.out
    assert res.err == ("Error: 1 Grade(s) have no verdict (outcome error: a judge or webhook "
                       "could not answer); `smevals grade` tries them again\n")


def test_diff_counts_errored_grades_apart(tmp_path: Path, cli, fake_openai) -> None:
    import subprocess

    answer_with(fake_openai, lambda user: "no verdict here")
    repo = tmp_path / "repo"
    ev = judge_eval(repo / "ev", fake_openai, JUDGE)
    cli("run", str(ev))
    assert cli("grade", str(ev)).code == 2
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "errored"], check=True)
    answer_with(fake_openai, _ok)
    assert cli("grade", str(ev)).code == 0
    res = cli("diff", "HEAD", str(ev), cwd=repo)
    assert ("- Errored Grades left out (a judge or webhook gave no verdict; neither pass nor "
            "fail): A 2; B 0\n") in res.out, res.both
    data = json.loads(cli("diff", "HEAD", str(ev), "--format", "json", cwd=repo).out)
    assert data["evals"][0]["errored"] == {"a": 2, "b": 0}


def test_judge_defaults_from_the_environment_and_cost(tmp_path: Path, cli, fake_openai) -> None:
    from tests.helpers import make_eval

    answer_with(fake_openai, _ok, usage={"prompt_tokens": 1000, "completion_tokens": 500})
    ev = make_eval(tmp_path / "ev", graders={"default": (
        "judge: {price: {input_per_mtok: 2.5, output_per_mtok: 10}}\n"
        "checks:\n  - checker: llm_judge\n    rubric: r\n")})
    cli("run", str(ev))
    res = cli("grade", str(ev))
    assert res.code == 1
    assert "no judge model: set `model` in the judge block" in res.out
    env = {"SMEVALS_JUDGE_MODEL": "env-judge", "SMEVALS_JUDGE_BASE_URL": fake_openai.base_url,
           "SMEVALS_JUDGE_API_KEY_ENV": "MY_JUDGE_KEY", "MY_JUDGE_KEY": "sk-test-123456"}
    res = cli("regrade", str(ev), env=env)
    assert res.code == 0, res.both
    assert fake_openai.requests[0].body["model"] == "env-judge"
    assert fake_openai.requests[0].headers["authorization"] == "Bearer sk-test-123456"
    assert newest(ev, "one")["judge"]["cost_usd"] == 0.0075
    report = cli("report", str(ev))
    assert ("- Judge: 2 call(s) (0 more answered by the judge cache), 2,000 input + 1,000 "
            "output tokens, $0.0150\n") in report.out
    kept = next(Path(newest(ev, "one")["_dir"]).glob("judge-*.json")).read_text()
    assert "sk-test-123456" not in kept
