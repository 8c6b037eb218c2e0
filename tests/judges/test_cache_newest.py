"""The judge cache serves a request's newest answer (so `--no-judge-cache` verdicts stick),
and `grade --dry-run` honours `--no-judge-cache` (`gc --judge-cache`: tests/store/test_gc.py)."""

from __future__ import annotations

from pathlib import Path

from smevals.files.canonical import loads
from tests.helpers.judges import answer_with, grades, judge_entries, judge_eval, old_entry

JUDGE = "  - checker: llm_judge\n    rubric: Is it polite?\n"
PASS = {"reason": "fine", "pass": True}
FAIL = {"reason": "rude", "pass": False}


def test_a_fresh_answer_is_served_afterwards(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: PASS)
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev))
    assert cli("grade", str(ev)).code == 0
    assert len(fake_openai.requests) == 2
    answer_with(fake_openai, lambda user: FAIL)             # the judge changes its mind
    assert cli("regrade", str(ev), "--no-judge-cache", "--dry-run").out == (
        "Would grade 2 Run(s); judge calls: 2 (0 from the judge cache, 2 to make)\n")
    assert cli("regrade", str(ev), "--dry-run").out == (
        "Would grade 2 Run(s); judge calls: 2 (2 from the judge cache, 0 to make)\n")
    res = cli("regrade", str(ev), "--no-judge-cache")
    assert res.code == 1, res.both
    assert "Against each Run's previous Grade: 2 pass->fail, 0 fail->pass" in res.out
    assert len(fake_openai.requests) == 4
    assert len(judge_entries(ev)) == 4                           # the old answers stay as evidence
    fake_openai.close()                                     # no judge: the store answers
    res = cli("regrade", str(ev))
    assert res.code == 1, res.both
    assert "Graded 2 Run(s): 0 pass, 2 fail\n" in res.out
    assert "Against each Run's previous Grade: 0 pass->fail, 0 fail->pass" in res.out
    assert [g["judge"]["cached"] for g in grades(ev)["one"]] == [0, 0, 1]
    assert cli("verify", str(ev)).code == 0


def test_the_newest_entry_wins_whatever_its_name(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: FAIL)
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev), "-t", "one")
    assert cli("grade", str(ev)).code == 1
    (entry,) = judge_entries(ev)
    fake_openai.close()
    # Entries merged in from other branches: an older pass, and a pass from the same
    # instant whose name sorts after it (a tie goes to the greater name).
    created = loads(entry.read_bytes())["created"]
    old_entry(entry, PASS, "2020-01-01T00:00:00Z")
    assert cli("regrade", str(ev)).code == 1
    tie = old_entry(entry, {"reason": "tie", "pass": True}, created)
    assert cli("verify", str(ev)).code == 0
    res = cli("regrade", str(ev))
    assert res.code == (0 if tie.name > entry.name else 1), res.both
