"""`smevals gc` (commands/gc.py, store/gc.py, grade/evict.py): superseded Grades, judge cache
entries by age, model and grader, and a staging folder a process still works in."""

from __future__ import annotations

import subprocess
from pathlib import Path

from smevals.store.read import Store
from smevals.store.write import host_name
from tests.helpers import make_eval, write
from tests.helpers.judges import answer_with, judge_entries, judge_eval, old_entry

JUDGE = "  - checker: llm_judge\n    rubric: Is it polite?\n"
PASS = {"reason": "fine", "pass": True}
FAIL = {"reason": "rude", "pass": False}


def test_gc_evicts_judge_cache_entries(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: PASS)
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev))
    assert cli("grade", str(ev)).code == 0
    one, _two = judge_entries(ev)
    old = old_entry(one, FAIL, "2020-01-01T00:00:00Z")
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
    assert len(judge_entries(ev)) == 2 and cli("verify", str(ev)).code == 0
    res = cli("gc", str(ev), "--judge-cache")               # no filter: every entry
    assert res.out.endswith("2 item(s) removed\n")
    assert not (ev / "results" / "judges").exists() or judge_entries(ev) == []
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


def test_gc_superseded_removes_grades_of_old_grader_versions(cli, tmp_path: Path):
    ev = make_eval(tmp_path / "ev")
    assert cli("run", "ev", "-g", cwd=tmp_path).code == 0
    old = Store(ev / "results").grades()
    assert len(old) == 2
    assert cli("gc", "ev", "--superseded", cwd=tmp_path).out == "0 item(s) removed\n"
    write(ev / "graders" / "default.yaml", "checks:\n  - checker: contains\n    value: say\n")
    version = old[0].record["grader"]["version"][:12]
    lines = [f"superseded Grade (grader default version {version}): ev/results/{g.rel}"
             for g in old]
    res = cli("gc", "ev", "--superseded", "--dry-run", cwd=tmp_path)
    assert res.out == "".join(f"would remove {line}\n" for line in lines) + \
        "2 item(s) would be removed\n"
    res = cli("gc", "ev", "--superseded", cwd=tmp_path)
    assert (res.code, res.out) == (0, "".join(f"removed {line}\n" for line in lines)
                                   + "2 item(s) removed\n")
    assert Store(ev / "results").grades() == []
    assert not (ev / "results" / "grades" / "default").exists()    # emptied folders go too
    assert cli("grade", "ev", cwd=tmp_path).code == 0
    assert cli("verify", "ev", cwd=tmp_path).out == "OK: 4 object(s) verified, no problems\n"


def test_gc_spares_a_staging_folder_a_process_still_works_in(cli, tmp_path: Path):
    """A runner left behind by a killed `smevals run` works in its staging folder: gc keeps
    the folder until that process ends, whatever the grace."""
    folder = tmp_path / "st" / ".staging" / f"run-{host_name()}-999999999-0123456789ab"
    folder.mkdir(parents=True)
    orphan = subprocess.Popen(["sleep", "30"], cwd=folder)
    try:
        for _ in range(2):
            res = cli("gc", "st", "--grace", "0", cwd=tmp_path)
            assert (res.code, res.out) == (0, "0 item(s) removed\n")
            assert cli("verify", "st", cwd=tmp_path).code == 0
            assert folder.is_dir()
    finally:
        orphan.kill()
        orphan.wait()
    res = cli("gc", "st", "--grace", "0", cwd=tmp_path)
    assert res.out.endswith("1 item(s) removed\n") and not folder.exists()
