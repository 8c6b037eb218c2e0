"""The judge cache is tamper-evident: an entry's name carries the hash of its whole record,
so a response edited by hand (even re-serialised canonically) is named by `verify`, never
served by `grade`, and refused by `merge`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from smevals.store.canonical import dumps, loads
from tests.judges.helpers import answer_with, judge_eval, newest

JUDGE = "  - checker: llm_judge\n    rubric: Is it polite?\n"
FAIL = {"reason": "rude", "pass": False}
PASS = '{"reason": "fine", "pass": true}'


def _graded_once(tmp_path: Path, cli, fake_openai) -> tuple[Path, Path]:
    """An Eval with one Run graded as fail by the judge; (eval, its one cache entry)."""
    answer_with(fake_openai, lambda user: FAIL)
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev), "-t", "one")
    assert cli("grade", str(ev)).code == 1
    (entry,) = (ev / "results" / "judges").glob("*/*.json")
    return ev, entry


def _turn_to_pass(entry: Path) -> str:
    """Edit the cached verdict from fail to pass, written back in canonical form; its
    path relative to the store."""
    record = loads(entry.read_bytes())
    assert record["response"]["content"] == json.dumps(FAIL)
    record["response"]["content"] = PASS
    os.chmod(entry, 0o644)
    entry.write_bytes(dumps(record))
    return f"judges/{entry.parent.name}/{entry.name}"


def test_entry_names_carry_the_hash_of_the_record(tmp_path: Path, cli, fake_openai) -> None:
    import hashlib

    ev, entry = _graded_once(tmp_path, cli, fake_openai)
    key, digest, ext = entry.name.split(".")
    record = loads(entry.read_bytes())
    assert ext == "json" and entry.parent.name == key[:2]
    kept = loads((Path(newest(ev, "one")["_dir"]) / "judge-1-llm-judge.json").read_bytes())
    assert kept["calls"][0]["cache_key"] == key
    assert hashlib.sha256(dumps(record["request"])).hexdigest() == key
    assert hashlib.sha256(entry.read_bytes()).hexdigest()[:12] == digest
    assert cli("verify", str(ev)).code == 0


def test_verify_names_an_edited_response(tmp_path: Path, cli, fake_openai) -> None:
    ev, entry = _graded_once(tmp_path, cli, fake_openai)
    rel = _turn_to_pass(entry)
    res = cli("verify", str(ev))
    assert res.code == 1, res.both
    digest = entry.name.split(".")[1]
    assert f"{rel}: the record hashes to " in res.out
    assert f", not {digest} as the file name says (edited by hand?)" in res.out
    assert "not in canonical form" not in res.out


def test_grade_asks_again_instead_of_serving_an_edited_answer(tmp_path: Path, cli,
                                                              fake_openai) -> None:
    ev, entry = _graded_once(tmp_path, cli, fake_openai)
    rel = _turn_to_pass(entry)
    assert cli("regrade", str(ev), "--dry-run").out == (
        "Would grade 1 Run(s); judge calls: 1 (0 from the judge cache, 1 to make)\n")
    res = cli("regrade", str(ev))
    assert res.code == 1, res.both
    assert "Graded 1 Run(s): 0 pass, 1 fail\n" in res.out
    assert len(fake_openai.requests) == 2
    assert newest(ev, "one")["judge"]["cached"] == 0
    assert ("Warning: 1 damaged object(s) left out (nothing in them was counted); run "
            "`smevals verify` for details:\n") in res.err
    assert f"/results/{rel}: the record hashes to " in res.err
    fresh = sorted(set((ev / "results" / "judges").glob("*/*.json")) - {entry})
    assert len(fresh) == 1 and fresh[0].name.startswith(entry.name.split(".")[0] + ".")
    # The fresh answer is now served; the edited one stays named by verify.
    res = cli("regrade", str(ev))
    assert res.code == 1 and len(fake_openai.requests) == 2, res.both
    assert newest(ev, "one")["judge"]["cached"] == 1
    assert cli("verify", str(ev)).code == 1


def test_an_edited_answer_with_no_judge_to_ask_is_an_error(tmp_path: Path, cli,
                                                           fake_openai) -> None:
    ev, entry = _graded_once(tmp_path, cli, fake_openai)
    _turn_to_pass(entry)
    fake_openai.close()
    res = cli("regrade", str(ev))
    assert res.code == 2, res.both
    assert "Graded 1 Run(s): 0 pass, 0 fail, 1 error\n" in res.out
    assert "judge error: connection refused by 127.0.0.1:" in res.out
    assert newest(ev, "one")["outcome"] == "error"


def test_an_entry_of_the_old_layout_is_not_served(tmp_path: Path, cli, fake_openai) -> None:
    ev, entry = _graded_once(tmp_path, cli, fake_openai)
    old = entry.with_name(entry.name.split(".")[0] + ".json")
    entry.rename(old)
    res = cli("verify", str(ev))
    assert res.code == 1
    assert (f"judges/{old.parent.name}/{old.name}: an entry of the old layout "
            "(<sha256 of the request>.json)") in res.out
    assert cli("regrade", str(ev)).code == 1
    assert len(fake_openai.requests) == 2


def test_merge_refuses_an_edited_answer(tmp_path: Path, cli, fake_openai) -> None:
    ev, entry = _graded_once(tmp_path, cli, fake_openai)
    rel = _turn_to_pass(entry)
    res = cli("merge", str(ev / "results"), "--into", str(tmp_path / "into"))
    assert res.code == 1, res.both
    assert f"{rel}: the record hashes to " in res.out + res.err
    assert not (tmp_path / "into" / "judges").exists()


def test_merged_shards_keep_both_answers_to_one_request(tmp_path: Path, cli,
                                                        fake_openai) -> None:
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    shards: list[tuple[str, dict[str, Any]]] = [("a", FAIL), ("b", json.loads(PASS))]
    for store, verdict in shards:
        def decide(user: str, v: dict[str, Any] = verdict) -> dict[str, Any]:
            return v

        answer_with(fake_openai, decide)
        cli("run", str(ev), "-t", "one", "--store", str(tmp_path / store))
        cli("grade", str(ev), "--store", str(tmp_path / store))
    for store in ("a", "b"):
        res = cli("merge", str(tmp_path / store), "--into", str(tmp_path / "into"))
        assert res.code == 0, res.both
    entries = sorted((tmp_path / "into" / "ev" / "judges").glob("*/*.json"))
    assert len(entries) == 2 and len({e.name.split(".")[0] for e in entries}) == 1
    assert cli("verify", str(ev), "--store", str(tmp_path / "into")).code == 0
    assert "0 object(s) copied" in cli("merge", str(tmp_path / "b"), "--into",
                                       str(tmp_path / "into")).out
    fake_openai.close()                     # the newest entry (b's pass) answers
    records = [loads(e.read_bytes()) for e in entries]
    newest_answer = max(records, key=lambda r: r["created"])["response"]["content"]
    assert newest_answer == PASS
    res = cli("regrade", str(ev), "--store", str(tmp_path / "into"))
    assert res.code == 0, res.both
    assert "Warning" not in res.err


def test_verify_at_a_revision_checks_the_judge_cache_as_verify_does(tmp_path: Path, cli,
                                                                    fake_openai) -> None:
    """Issue 34 item 5: `verify --rev` read no judge cache, so a committed edited verdict
    passed it."""
    from tests.helpers.git import git

    ev, entry = _graded_once(tmp_path, cli, fake_openai)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "graded")
    sound = cli("verify", str(ev))
    assert (sound.code, sound.out) == (0, "OK: 3 object(s) verified, no problems\n")
    assert cli("verify", "--rev", "HEAD", str(ev), cwd=tmp_path).out == sound.out
    rel = _turn_to_pass(entry)
    bucket = entry.parent
    (bucket / "stray.txt").write_text("x")
    (bucket / "notes").mkdir()
    (bucket / "notes" / "x.txt").write_text("x")
    old = entry.name.split(".")[0] + ".json"
    (bucket / old).write_bytes(entry.read_bytes())
    (bucket.parent / "loose.json").write_text("{}")
    os.symlink(entry.name, bucket / (entry.name[:-17] + "0" * 12 + ".json"))
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "tampered")
    here, there = cli("verify", str(ev)), cli("verify", "--rev", "HEAD", str(ev), cwd=tmp_path)
    assert (here.code, there.code) == (1, 1), there.both

    def problems(out: str) -> list[str]:
        return sorted(line[line.index("judges/"):] for line in out.splitlines()
                      if "judges/" in line)

    found = problems(there.out)
    assert found == problems(here.out)
    assert [line.split(":", 1)[0] for line in found] == sorted([
        f"judges/{bucket.name}/notes", f"judges/{bucket.name}/{old}",
        f"judges/{bucket.name}/{entry.name[:-17]}{'0' * 12}.json",
        f"judges/{bucket.name}/stray.txt", "judges/loose.json", rel])
    assert f"{rel}: the record hashes to " in there.out
