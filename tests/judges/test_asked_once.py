"""Identical judge requests of one `grade` are sent once, also while the first is in flight:
the others get the same answer (or the same error)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.judges import grades, judge_eval
from tools.fake_openai import Scripted, completion

JUDGE = "  - checker: llm_judge\n    rubric: Is it polite?\n"


def _slow(status: int, body: object):
    """Every request answered after 0.3 s, so that the identical ones of a `-j 4` pool are
    asked while the first is still in flight."""
    return lambda request: Scripted(status, body, delay=0.3)


def test_identical_requests_are_asked_once(tmp_path: Path, cli, fake_openai) -> None:
    fake_openai.respond_with(_slow(200, completion(json.dumps({"reason": "ok", "pass": True}),
                                                   usage={"prompt_tokens": 10,
                                                          "completion_tokens": 2})))
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev), "-n", "3")                  # 3 samples of each task: the same output
    assert cli("grade", str(ev), "--dry-run").out == (
        "Would grade 6 Run(s); judge calls: 6 (0 from the judge cache, 4 the same as another "
        "(asked once), 2 to make)\n")
    res = cli("grade", str(ev), "-j", "4")
    assert res.code == 0, res.both
    assert "Graded 6 Run(s): 6 pass, 0 fail\n" in res.out
    assert len(fake_openai.requests) == 2
    for task in ("one", "two"):
        usage = [g["judge"] for g in grades(ev)[task]]
        assert sum(u["calls"] for u in usage) == 1 and sum(u["cached"] for u in usage) == 2
        assert sum(u["input_tokens"] for u in usage) == 10
    calls = [json.loads(f.read_text())["calls"][0]
             for f in sorted((ev / "results" / "grades").rglob("judge-1-*.json"))]
    # Those asked while the first was in flight say `shared`; those asked after it landed
    # were answered by the cache entry it made. Either way, no call.
    assert sorted(c["cached"] for c in calls) == [False, False] + [True] * 4
    assert all(c["cached"] for c in calls if c.get("shared"))
    assert len(list((ev / "results" / "judges").glob("*/*.json"))) == 2
    report = cli("report", str(ev))
    assert ("- Judge: 2 call(s) (4 more answered by the judge cache), 20 input + 4 output "
            "tokens\n") in report.out
    # --no-judge-cache asks afresh, still once per distinct request.
    assert cli("regrade", str(ev), "--no-judge-cache", "-j", "4").code == 0
    assert len(fake_openai.requests) == 4


def test_an_error_is_shared_and_retried_by_the_next_grade(tmp_path: Path, cli,
                                                          fake_openai) -> None:
    fake_openai.respond_with(_slow(500, {"error": "down"}))
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev), "-t", "one", "-n", "4")
    res = cli("grade", str(ev), "-j", "4")
    assert res.code == 2, res.both
    assert "Graded 4 Run(s): 0 pass, 0 fail, 4 error\n" in res.out
    assert res.out.count("judge error: HTTP 500: {\"error\": \"down\"} (gave up after 1 "
                         "attempt(s))") == 4
    assert len(fake_openai.requests) == 1
    assert sum(g["judge"]["calls"] for g in grades(ev)["one"]) == 1
    fake_openai.respond_with(_slow(200, completion(json.dumps({"reason": "ok", "pass": True}))))
    res = cli("grade", str(ev), "-j", "4")
    assert res.code == 0, res.both
    assert "4 Run(s) graded again: their current Grade was an error (no verdict)\n" in res.out
    assert len(fake_openai.requests) == 2
