"""The judge cache serves a request's newest answer (so `--no-judge-cache` verdicts stick),
`grade --dry-run` honours `--no-judge-cache`, and `gc --judge-cache` evicts entries."""

from __future__ import annotations

import json
from pathlib import Path

from smevals.files.canonical import dumps, loads
from smevals.store import judgecache
from tests.helpers.judges import answer_with, grades, judge_eval

JUDGE = "  - checker: llm_judge\n    rubric: Is it polite?\n"
PASS = {"reason": "fine", "pass": True}
FAIL = {"reason": "rude", "pass": False}


def _entries(ev: Path) -> list[Path]:
    return sorted((ev / "results" / "judges").glob("*/*.json"))


def _old_entry(entry: Path, verdict: dict[str, object], created: str) -> Path:
    """An entry for the same request as `entry`, answered with `verdict` at `created` (as a
    branch merged in would bring it); its name is the one its content gives."""
    record = loads(entry.read_bytes())
    record["response"]["content"] = json.dumps(verdict)
    record["created"] = created
    data = dumps(record)
    key = entry.name.split(".")[0]
    path = entry.parent / judgecache.entry_name(key, data)
    path.write_bytes(data)
    return path


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
    assert len(_entries(ev)) == 4                           # the old answers stay as evidence
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
    (entry,) = _entries(ev)
    fake_openai.close()
    # Entries merged in from other branches: an older pass, and a pass from the same
    # instant whose name sorts after it (a tie goes to the greater name).
    created = loads(entry.read_bytes())["created"]
    _old_entry(entry, PASS, "2020-01-01T00:00:00Z")
    assert cli("regrade", str(ev)).code == 1
    tie = _old_entry(entry, {"reason": "tie", "pass": True}, created)
    assert cli("verify", str(ev)).code == 0
    res = cli("regrade", str(ev))
    assert res.code == (0 if tie.name > entry.name else 1), res.both


def test_gc_evicts_judge_cache_entries(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: PASS)
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev))
    assert cli("grade", str(ev)).code == 0
    one, _two = _entries(ev)
    old = _old_entry(one, FAIL, "2020-01-01T00:00:00Z")
    rel = f"ev/results/judges/{old.parent.name}/{old.name}"
    res = cli("gc", str(ev), "--judge-cache", "--older-than", "30d", "--dry-run", cwd=tmp_path)
    assert res.out == (f"would remove judge cache entry (judge model judge-x, stored "
                       f"2020-01-01 00:00:00 UTC): {rel}\n1 item(s) would be removed\n")
    assert old.exists()
    for other in (["--model", "judge-y"], ["--grader", "other"]):
        assert cli("gc", str(ev), "--judge-cache", *other).out == "0 item(s) removed\n"
    res = cli("gc", str(ev), "--judge-cache", "--older-than", "4w2d", "--model", "judge-x",
              "--grader", "default", cwd=tmp_path)
    assert res.out == (f"removed judge cache entry (judge model judge-x, stored "
                       f"2020-01-01 00:00:00 UTC): {rel}\n1 item(s) removed\n"), res.both
    assert len(_entries(ev)) == 2 and cli("verify", str(ev)).code == 0
    res = cli("gc", str(ev), "--judge-cache")               # no filter: every entry
    assert res.out.endswith("2 item(s) removed\n")
    assert not (ev / "results" / "judges").exists() or _entries(ev) == []
    assert cli("regrade", str(ev), "--dry-run").out.startswith(
        "Would grade 2 Run(s); judge calls: 2 (0 from the judge cache, 2 to make)")


def test_gc_judge_cache_bad_input(tmp_path: Path, cli, fake_openai) -> None:
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    for bad in ("30", "d", "1.5h", "3 days", "-1d", ""):
        res = cli("gc", str(ev), "--judge-cache", "--older-than", bad)
        assert res.code == 2, (bad, res.both)
        assert res.err == (f"Error: --older-than: '{bad}' is not a duration (a whole number "
                           "and a unit, s m h d or w, e.g. 90d, 12h or 1d12h)\n")
    res = cli("gc", str(ev), "--older-than", "30d")
    assert res.code == 2
    assert ("--older-than, --grader and --model select judge cache entries: use them with "
            "--judge-cache") in res.err
