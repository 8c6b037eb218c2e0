"""`--shard I/N` on run and grade, and `smevals merge`: shards merged equal one run."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from tests.helpers import make_eval

TASKS = {f"t{i}": f"prompt: p{i}\n" for i in range(5)}


def _cells(store: Path) -> Counter[tuple[str, str, int]]:
    """(task, model, sample) of every Run in a store folder of one Eval."""
    found: Counter[tuple[str, str, int]] = Counter()
    for record in store.glob("runs/*/*/*/*/run.json"):
        rec = json.loads(record.read_text())
        found[(rec["task"]["name"], rec["model"], rec["sample"])] += 1
    return found


def _objects(store: Path) -> set[str]:
    return {str(p.parent.relative_to(store)) for p in store.glob("*s/**/*.json")
            if p.name in ("run.json", "grade.json")}


def test_shards_merged_equal_one_run(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks=TASKS)
    whole = cli("run", str(ev), "-n", "2", "-m", "a", "-m", "b", "--store", str(tmp_path / "w"))
    assert whole.code == 0, whole.both
    sizes = []
    for i in (1, 2, 3):
        res = cli("run", str(ev), "-n", "2", "-m", "a", "-m", "b", "--shard", f"{i}/3",
                  "--store", str(tmp_path / f"s{i}"))
        assert res.code == 0, res.both
        sizes.append(sum(_cells(tmp_path / f"s{i}" / "ev").values()))
        assert res.out.splitlines()[0].startswith(f"ev: {sizes[-1]} Run(s) to make")
    assert sum(sizes) == 20 and all(sizes)
    into = tmp_path / "all"
    res = cli("merge", *(str(tmp_path / f"s{i}") for i in (1, 2, 3)), "--into", str(into))
    assert res.code == 0, res.both
    assert res.out.splitlines()[-1] == (
        "Merged 3 store(s): 20 object(s) copied, 0 already there, 0 refused")
    assert _cells(into / "ev") == _cells(tmp_path / "w" / "ev")
    assert max(_cells(into / "ev").values()) == 1
    again = cli("merge", *(str(tmp_path / f"s{i}") for i in (1, 2, 3)), "--into", str(into))
    assert again.code == 0, again.both
    assert again.out.splitlines()[-1] == (
        "Merged 3 store(s): 0 object(s) copied, 20 already there, 0 refused")
    assert cli("verify", str(ev), "--store", str(into)).code == 0
    plan = cli("run", str(ev), "-n", "2", "-m", "a", "-m", "b", "--store", str(into),
               "--dry-run")
    assert plan.out.splitlines()[0].startswith("ev: 0 Run(s) to make")


def test_shard_is_deterministic_and_dry_run_shows_the_share(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks=TASKS)
    counts = []
    for i in (1, 2):
        one = cli("run", str(ev), "-n", "3", "--shard", f"{i}/2", "--dry-run")
        two = cli("run", str(ev), "-n", "3", "--shard", f" {i} / 2 ", "--dry-run")
        assert one.code == 0 and one.out == two.out
        counts.append(sum(int(line.rsplit(" ", 1)[1]) for line in one.out.splitlines()[1:]))
    assert sum(counts) == 15 and all(counts)


def test_bad_shard_values_exit_2(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev")
    for bad, why in (("0/3", "'0/3' needs 1 <= I <= N"), ("4/3", "'4/3' needs 1 <= I <= N"),
                     ("x", "'x' is not I/N"), ("1/0", "'1/0' needs 1 <= I <= N")):
        for command in ("run", "grade"):
            res = cli(command, str(ev), "--shard", bad)
            assert res.code == 2, res.both
            assert f"Invalid value for '--shard': {why}" in res.err
    assert not (ev / "results").exists()


def test_grade_shards_grade_each_run_once(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks=TASKS)
    assert cli("run", str(ev), "-n", "2").code == 0
    graded = 0
    for i in (1, 2):
        res = cli("grade", str(ev), "--shard", f"{i}/2")
        assert res.code == 0, res.both
        graded += int(res.out.split("Graded ")[1].split(" ")[0])
    assert graded == 10
    runs = Counter(json.loads(p.read_text())["run"]["id"]
                   for p in (ev / "results").glob("grades/**/grade.json"))
    assert len(runs) == 10 and set(runs.values()) == {1}
    assert "Graded 0 Run(s)" in cli("grade", str(ev)).out


def test_merge_refuses_and_names_a_damaged_object(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev")
    assert cli("run", str(ev), "-g").code == 0
    src = ev / "results"
    bad = sorted(src.glob("runs/one/*/*/*"))[0]
    out = bad / "output.txt"
    os.chmod(out, 0o644)
    out.write_text("edited\n")
    into = tmp_path / "into"
    res = cli("merge", str(src), "--into", str(into))
    assert res.code == 1, res.both
    rel = bad.relative_to(src).as_posix()
    assert (f"  refused {rel}: output.txt: size changed: " in res.err)
    assert res.out.splitlines()[-1] == (      # its Grade is refused with it
        "Merged 1 store(s): 2 object(s) copied, 0 already there, 2 refused")
    assert not (into / rel).exists()
    grade = next(o for o in _objects(src) if o.startswith("grades/default/one/"))
    assert f"  refused {grade}: folder: the Run it grades is not in {into} " in res.err
    assert _objects(into) == _objects(src) - {rel, grade}
    assert not [p for p in (into / ".staging").iterdir() if not p.name.startswith(".")]


def test_merge_refuses_a_record_that_does_not_hash_to_its_id(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: x\n"})
    assert cli("run", str(ev)).code == 0
    src = ev / "results"
    folder = next(src.glob("runs/one/*/*/*"))
    record = folder / "run.json"
    os.chmod(record, 0o644)
    record.write_text(record.read_text().replace('"sample": 0', '"sample": 7'))
    res = cli("merge", str(src), "--into", str(tmp_path / "into"))
    assert res.code == 1
    assert "run.json hashes to" in res.err
    assert _objects(tmp_path / "into") == set()


def test_merge_a_store_folder_of_several_evals(cli, tmp_path: Path) -> None:
    for name in ("a", "b"):
        make_eval(tmp_path / name, name=name)
        assert cli("run", str(tmp_path / name), "--store", str(tmp_path / "shared")).code == 0
    res = cli("merge", "shared", "--into", "into", cwd=tmp_path)
    assert res.code == 0, res.both
    assert res.out.splitlines() == [
        "shared/a -> into/a: 2 copied, 0 already there",
        "shared/b -> into/b: 2 copied, 0 already there",
        "Merged 2 store(s): 4 object(s) copied, 0 already there, 0 refused"]
    for name in ("a", "b"):
        assert cli("verify", str(tmp_path / name), "--store", str(tmp_path / "into")).code == 0


def test_merge_bad_input_exits_2(cli, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    res = cli("merge", str(tmp_path / "empty"), "--into", str(tmp_path / "x"))
    assert res.code == 2
    assert res.err == (f"Error: {tmp_path / 'empty'}: not a store (no runs/ or grades/ "
                       "folder in it or in any sub-folder)\n")
    res = cli("merge", str(tmp_path / "nope"), "--into", str(tmp_path / "x"))
    assert res.code == 2 and "nope: no such folder" in res.err
    res = cli("merge", str(tmp_path / "empty"))
    assert res.code == 2 and "Missing option '--into'" in res.err
    assert not (tmp_path / "x").exists()


def test_merge_copies_the_judge_cache_and_refuses_a_damaged_entry(cli, tmp_path: Path) -> None:
    from smevals.store import judgecache

    ev = make_eval(tmp_path / "ev")
    assert cli("run", str(ev), "--store", str(tmp_path / "src")).code == 0
    source = tmp_path / "src" / "ev"
    keep: Any = judgecache.keep         # any request and answer: the cache stores JSON
    good = keep(source, {"model": "m", "messages": ["a"]}, {"pass": True}, "2026")
    bad = keep(source, {"model": "m", "messages": ["b"]}, {"pass": False}, "2026")
    bad.chmod(0o644)
    bad.write_bytes(bad.read_bytes().replace(b'"b"', b'"c"'))     # another request
    res = cli("merge", "src", "--into", "into", cwd=tmp_path)
    assert res.code == 1
    rel = f"judges/{bad.parent.name}/{bad.name}"
    assert f"{rel}: the record hashes to " in res.out + res.err
    assert "; its request hashes to " in res.out + res.err
    into = tmp_path / "into" / "ev"
    assert (into / f"judges/{good.parent.name}/{good.name}").read_bytes() == good.read_bytes()
    assert not (into / rel).exists()
    again = cli("merge", "src", "--into", "into", cwd=tmp_path)
    assert "0 object(s) copied" in again.out
