"""The five model-judge checkers end to end: `smevals grade` against a fake judge server."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.judges import answer_with, judge_eval, newest, user_messages
from tools.fake_openai import Scripted


def test_llm_judge_pass_and_fail_with_every_call_kept(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: {"reason": "polite" if "hello one" in user else "rude",
                                           "pass": "hello one" in user},
                usage={"prompt_tokens": 100, "completion_tokens": 7})
    ev = judge_eval(tmp_path / "ev", fake_openai,
                    "  - checker: llm_judge\n    name: polite\n    rubric: Is it polite?\n")
    assert cli("run", str(ev)).code == 0
    res = cli("grade", str(ev), "-j", "1")
    assert res.code == 1, res.both
    assert "Graded 2 Run(s): 1 pass, 1 fail\n" in res.out
    assert "    failed check 'polite': judge: rude\n" in res.out
    one, two = newest(ev, "one"), newest(ev, "two")
    assert (one["outcome"], one["score"]) == ("pass", 1.0)
    assert (two["outcome"], two["score"]) == ("fail", 0.0)
    assert one["judge"] == {"calls": 1, "cached": 0, "input_tokens": 100, "output_tokens": 7}
    assert one["checks"][0]["details"]["reason"] == "polite"
    kept = json.loads((Path(one["_dir"]) / "judge-1-polite.json").read_text())
    call = kept["calls"][0]
    assert call["cached"] is False and call["verdict"] == {"reason": "polite", "pass": True}
    assert call["request"]["model"] == "judge-x"
    assert call["request"]["params"]["temperature"] == 0
    assert call["request"]["params"]["response_format"]["type"] == "json_schema"
    assert "hello one" in call["request"]["messages"][1]["content"]
    assert json.loads(call["response"]["body"])["usage"]["prompt_tokens"] == 100
    assert call["usage"]["input_tokens"] == 100 and call["latency_ms"] >= 0
    assert "judge-1-polite.json" in cli("show", one["_dir"].rsplit("/", 1)[1][-12:],
                                        str(ev)).out


def test_llm_score_scales_and_thresholds(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: {"reason": "ok", "score": 4 if "hello one" in user
                                           else 2})
    ev = judge_eval(tmp_path / "ev", fake_openai, "  - checker: llm_score\n    rubric: Clear?\n"
                    "    scale: [1, 5]\n    threshold: 0.7\n")
    cli("run", str(ev))
    res = cli("grade", str(ev), "-j", "1")
    assert "Graded 2 Run(s): 1 pass, 1 fail\n" in res.out, res.both
    assert newest(ev, "one")["score"] == 0.75 and newest(ev, "two")["score"] == 0.25
    assert "from 1 (worst) to 5 (best)" in user_messages(fake_openai)[0]


def test_llm_category_passes_on_a_passing_label(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: {"reason": "r", "category": "Refusal"
                                           if "hello two" in user else "answer"})
    ev = judge_eval(tmp_path / "ev", fake_openai, "  - checker: llm_category\n"
                    "    categories: [Answer, Refusal, Other]\n    passing: [answer]\n")
    cli("run", str(ev))
    res = cli("grade", str(ev), "-j", "1")
    assert "Graded 2 Run(s): 1 pass, 1 fail\n" in res.out, res.both
    assert newest(ev, "one")["tags"] == ["answer"]
    assert newest(ev, "two")["tags"] == ["refusal"]
    assert 'categories: Answer, Refusal, Other' in user_messages(fake_openai)[0]


def test_llm_answer_match_reads_the_expected_answer_from_the_task(tmp_path: Path, cli,
                                                                   fake_openai) -> None:
    answer_with(fake_openai, lambda user: {"reason": "r", "match": "<expected>\n1\n" in user})
    ev = judge_eval(tmp_path / "ev", fake_openai, "  - checker: llm_answer_match\n")
    (ev / "tasks" / "one.yaml").write_text("prompt: hello one\ngrading:\n  expected: 1\n")
    (ev / "tasks" / "two.yaml").write_text("prompt: hello two\ngrading:\n  expected: 2\n")
    cli("run", str(ev))
    res = cli("grade", str(ev), "-j", "1")
    assert "Graded 2 Run(s): 1 pass, 1 fail\n" in res.out, res.both
    assert newest(ev, "one")["outcome"] == "pass"


def _pairwise(prefer: str):
    """A judge preferring `prefer`: 'candidate', 'reference' or 'first' (position bias)."""
    def decide(user: str) -> dict[str, str]:
        a = user.split("<response_a>\n", 1)[1].split("\n</response_a>", 1)[0]
        if prefer == "first":
            return {"reason": "first", "winner": "A"}
        candidate_is_a = "says" in a
        wins_a = candidate_is_a == (prefer == "candidate")
        return {"reason": prefer, "winner": "A" if wins_a else "B"}
    return decide


def test_llm_pairwise_asks_in_both_orders(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, _pairwise("candidate"))
    ev = judge_eval(tmp_path / "ev", fake_openai, "  - checker: llm_pairwise\n"
                    "    reference: {task: gold}\n")
    for task in ("one", "two"):
        (ev / "tasks" / f"{task}.yaml").write_text(f"prompt: hello {task}\ngrading:\n"
                                                   f"  gold: plain reference {task}\n")
    cli("run", str(ev))
    res = cli("grade", str(ev), "-j", "1")
    assert res.code == 0, res.both
    users = sorted(u for u in user_messages(fake_openai) if "hello one" in u)
    assert len(user_messages(fake_openai)) == 4 and len(users) == 2   # both orders at once
    assert [("<response_a>\nm1 says" in u, "<response_b>\nm1 says" in u) for u in users] \
        in ([(True, False), (False, True)], [(False, True), (True, False)])
    check = newest(ev, "one")["checks"][0]
    assert (check["score"], check["details"]["outcome"]) == (1.0, "win")
    kept = json.loads((Path(newest(ev, "one")["_dir"]) / "judge-1-llm-pairwise.json").read_text())
    assert [c["order"] for c in kept["calls"]] == ["AB", "BA"]


def test_llm_pairwise_loss_and_position_bias_is_a_tie(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, _pairwise("reference"))
    checks = ("  - checker: llm_pairwise\n    reference: the reference\n    threshold: 0.6\n")
    ev = judge_eval(tmp_path / "ev", fake_openai, checks)
    cli("run", str(ev), "-t", "one")
    res = cli("grade", str(ev), "-j", "1")
    assert res.code == 1
    check = newest(ev, "one")["checks"][0]
    assert (check["score"], check["details"]["outcome"]) == (0.0, "loss")
    answer_with(fake_openai, _pairwise("first"))
    res = cli("regrade", str(ev), "-j", "1", "--no-judge-cache")
    check = newest(ev, "one")["checks"][0]
    assert (check["score"], check["details"]["outcome"], check["details"]["flipped"]) == \
        (0.5, "tie", True)
    assert "the reference is preferred (tie)" in res.out


def test_llm_pairwise_against_another_models_run(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: {"reason": "r", "winner": "tie"})
    ev = judge_eval(tmp_path / "ev", fake_openai, "  - checker: llm_pairwise\n"
                    "    reference_model: base\n")
    cli("run", str(ev), "-t", "one")
    res = cli("grade", str(ev), "-j", "1")
    assert res.code == 2
    assert "check 'llm_pairwise' had no verdict: no successful Run of model 'base'" in res.out
    cli("run", str(ev), "-t", "one", "-m", "base")
    res = cli("grade", str(ev), "-j", "1", "-m", "m1")
    assert res.code == 0, res.both
    assert any("<response_b>\nbase says: hello one" in u for u in user_messages(fake_openai))


def test_a_bad_judge_option_fails_validation(tmp_path: Path, cli, fake_openai) -> None:
    ev = judge_eval(tmp_path / "ev", fake_openai, "  - checker: llm_category\n"
                    "    categories: [a, b]\n    passing: [c]\n"
                    "  - checker: llm_judge\n    rubric: r\n    judge: {temperature: hot}\n")
    res = cli("validate", str(ev))
    assert res.code == 2
    assert "checks[0].passing: not among the categories: c" in res.both
    assert "checks[1].judge.temperature: expected a number >= 0, got \"hot\"" in res.both
    assert fake_openai.requests == []


def test_template_placeholders_and_an_unknown_one(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: Scripted(200, {"choices": [{"message": {
        "content": json.dumps({"reason": user, "pass": True})}}]}))
    ev = judge_eval(tmp_path / "ev", fake_openai, "  - checker: llm_judge\n    rubric: R\n"
                    "    template: 'Q={{task.prompt}} A={{output}} {{nope}}'\n")
    cli("run", str(ev), "-t", "one")
    res = cli("grade", str(ev))
    assert res.code == 1
    assert "unknown template placeholder {{nope}}" in res.out
    assert fake_openai.requests == []
