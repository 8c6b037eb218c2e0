"""Readers leave damaged objects out and say so: a record that does not hash to its id, that
breaks its schema, or that is not a regular file (a FIFO never blocks anything)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from smevals.store.canonical import dumps, loads, sha256_bytes
from smevals.store.layout import object_id
from tests.helpers import make_eval
from tests.store.helpers import commit_all, git

GRADER = "checks:\n  - checker: contains\n    value: one\n"     # task one passes, two fails
WARNING = "damaged object(s) left out (nothing in them was counted); run `smevals verify`"
QUICK = 30                                                     # seconds: a hang fails a test


def graded_eval(cli, tmp_path: Path) -> Path:
    ev = make_eval(tmp_path / "ev", graders={"default": GRADER})
    res = cli("run", str(ev), "-g", cwd=tmp_path)
    assert res.code == 1, res.both                              # task two fails its Grade
    return ev


def only(ev: Path, pattern: str) -> Path:
    found = sorted((ev / "results").glob(pattern))
    assert len(found) == 1, found
    return found[0]


def rewrite(folder: Path, name: str, change) -> Path:
    """Edit a record canonically in place (as a hand edit would): its id no longer fits."""
    path = folder / name
    record = loads(path.read_bytes())
    change(record)
    path.chmod(0o644)
    path.write_bytes(dumps(record))
    return folder


def forge(folder: Path, name: str, change) -> Path:
    """A record that breaks its schema but hashes to its (new) id, as if written so."""
    record = loads((folder / name).read_bytes())
    change(record)
    data = dumps(record)
    oid = object_id(folder.name.split("-")[0], sha256_bytes(data))
    new = folder.parent / oid
    shutil.copytree(folder, new)
    (new / name).chmod(0o644)
    (new / name).write_bytes(data)
    def unlock(remove: Callable[[str], object], path: str, _error: object) -> None:
        os.chmod(os.path.dirname(path), 0o755)
        remove(path)

    shutil.rmtree(folder, onerror=unlock)
    return new


def report_json(cli, tmp_path: Path, ev: Path, *args: str) -> tuple[dict[str, Any], str]:
    res = cli("report", str(ev), "--json", *args, cwd=tmp_path, timeout=QUICK)
    assert res.code == 0, res.both
    return json.loads(res.out)["evals"][0], res.err


def test_a_grade_edited_by_hand_from_fail_to_pass_is_not_counted(cli, tmp_path: Path):
    ev = graded_eval(cli, tmp_path)
    before, _ = report_json(cli, tmp_path, ev)
    assert before["summary"]["passed"] == 1 and before["summary"]["graded"] == 2
    grade = rewrite(only(ev, "grades/default/two/*/*/*"), "grade.json",
                    lambda r: r.update(outcome="pass"))
    rel = str(grade.relative_to(ev / "results"))
    doc, err = report_json(cli, tmp_path, ev)
    assert doc["summary"]["passed"] == 1 and doc["summary"]["graded"] == 1
    assert doc["damaged"] == [{"path": rel, "problem": "grade.json does not hash to the "
                               "object's id (edited by hand?)"}]
    assert doc["notes"][0] == "1 damaged object(s) left out, nothing in them counted (see " \
                              "`smevals verify`)"
    assert err == f"Warning: 1 {WARNING} for details:\n  {ev}/results/{rel}: grade.json does " \
                  "not hash to the object's id (edited by hand?)\n"
    res = cli("verify", str(ev), cwd=tmp_path)
    assert res.code == 1 and f"{rel}: grade.json hashes to" in res.out


def test_a_flipped_grade_committed_is_no_flip_in_diff(cli, tmp_path: Path):
    ev = graded_eval(cli, tmp_path)
    commit_all(tmp_path, "graded")
    grade = rewrite(only(ev, "grades/default/two/*/*/*"), "grade.json",
                    lambda r: r.update(outcome="pass"))
    commit_all(tmp_path, "edited by hand")
    res = cli("diff", "HEAD~1", "HEAD", str(ev), "--format", "json", cwd=tmp_path, timeout=QUICK)
    assert res.code == 0, res.both
    doc = json.loads(res.out)
    assert doc["evals"][0]["flips"] == []
    rel = str(grade.relative_to(ev / "results"))
    assert [(d["path"], d["problem"]) for d in doc["damaged"]] == [
        (rel, "grade.json does not hash to the object's id (edited by hand?)")]
    head = git(tmp_path, "rev-parse", "HEAD").strip()
    assert doc["damaged"][0]["store"] == f"{head}:{ev}/results"
    assert WARNING in res.err


BAD_RECORDS = {
    "grade-run-null": ("grades/default/two/*/*/*", "grade.json", lambda r: r.update(run=None),
                       "grade.json does not match grade.schema.json at 'run': None is not of "
                       "type 'object'"),
    "grade-score-high": ("grades/default/two/*/*/*", "grade.json",
                         lambda r: r.update(score="high"),
                         "grade.json does not match grade.schema.json at 'score': 'high' is "
                         "not of type 'number', 'null'"),
    "run-without-task": ("runs/two/*/*/*", "run.json", lambda r: r.pop("task"),
                         "run.json does not match run.schema.json at '(top level)': 'task' is "
                         "a required property"),
}


@pytest.mark.parametrize("case", sorted(BAD_RECORDS))
def test_records_that_break_their_schema_are_left_out_by_every_reader(cli, tmp_path: Path,
                                                                      case: str):
    pattern, name, change, problem = BAD_RECORDS[case]
    ev = graded_eval(cli, tmp_path)
    was = str(only(ev, pattern).relative_to(ev / "results"))
    bad = forge(only(ev, pattern), name, change)
    rel = str(bad.relative_to(ev / "results"))
    doc, err = report_json(cli, tmp_path, ev)
    # a forged Run has a new id: its Grade's Run is missing, and that is named too, as
    # `verify` names it
    orphan = [{"path": str(only(ev, "grades/default/two/*/*/*").relative_to(ev / "results")),
               "problem": f"the Run it grades is missing: {was}"}] if name == "run.json" else []
    assert doc["damaged"] == [{"path": rel, "problem": problem}, *orphan]
    assert doc["summary"]["passed"] == 1 and doc["summary"]["graded"] == 1
    assert f"  {ev}/results/{rel}: {problem}\n" in err
    for args in (["report", str(ev)], ["build", str(ev), "-o", "site"], ["grade", str(ev)],
                 ["diff", "HEAD", str(ev)]):
        if args[0] == "diff":
            commit_all(tmp_path)
        res = cli(*args, cwd=tmp_path, timeout=QUICK)
        assert res.code == (1 if args[0] == "grade" and "grade" in case else 0), \
            (args, res.both)                    # grade grades Run two again: it fails
        assert f"{ev}/results/{rel}: {problem}\n" in res.err, (args, res.err)
    res = cli("show", bad.name, str(ev), cwd=tmp_path, timeout=QUICK)
    assert res.code == 2
    assert res.err.endswith(f"Error: {rel} in {ev}/results is damaged: {problem} (run "
                            "`smevals verify`)\n")


def test_a_damaged_run_is_not_counted_by_run_top_up(cli, tmp_path: Path):
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hello one\n"})
    assert cli("run", str(ev), "-n", "2", cwd=tmp_path).code == 0
    runs = sorted((ev / "results" / "runs").glob("one/*/*/*"))
    rewrite(runs[0], "run.json", lambda r: r.update(status="ok", sample=7))
    res = cli("run", str(ev), "-n", "2", cwd=tmp_path, timeout=QUICK)
    assert res.code == 0, res.both
    assert "1 ok, 0 failed" in res.out
    assert WARNING in res.err
    assert len(list((ev / "results" / "runs").glob("one/*/*/*"))) == 3


@pytest.mark.parametrize("kind", ["run", "grade"])
def test_a_fifo_in_place_of_a_record_blocks_nothing(cli, tmp_path: Path, kind: str):
    ev = graded_eval(cli, tmp_path)
    commit_all(tmp_path)                        # for `diff HEAD`: committed -> working tree
    folder = only(ev, "runs/two/*/*/*" if kind == "run" else "grades/default/two/*/*/*")
    record = folder / f"{kind}.json"
    record.unlink()
    os.mkfifo(record)
    rel = str(folder.relative_to(ev / "results"))
    problem = f"{kind}.json is a FIFO, not a regular file"
    res = cli("verify", str(ev), cwd=tmp_path, timeout=QUICK)
    assert res.code == 1
    assert f"{rel}/{kind}.json: {problem}\n" in res.out
    for args in (["report", str(ev)], ["build", str(ev), "-o", "site"], ["grade", str(ev)],
                 ["run", str(ev), "-n", "1", "-g"], ["show", folder.name[-12:], str(ev)],
                 ["diff", "HEAD", str(ev)]):
        res = cli(*args, cwd=tmp_path, timeout=QUICK)
        assert res.code in (0, 1, 2), (args, res.both)
        assert "Internal error" not in res.err, (args, res.err)
        assert f"  {ev}/results/{rel}: {problem}\n" in res.err, (args, res.err)
    doc, _ = report_json(cli, tmp_path, ev)
    assert {"path": rel, "problem": problem} in doc["damaged"]


def test_ordinary_edits_of_a_store_still_read_fast_from_the_cache(cli, tmp_path: Path):
    """The cache keeps each record's verdict keyed by its stat stamp: a second report reads
    the damaged record as damaged again, and repairing it makes it count again."""
    ev = graded_eval(cli, tmp_path)
    folder = only(ev, "grades/default/two/*/*/*")
    original = (folder / "grade.json").read_bytes()
    rewrite(folder, "grade.json", lambda r: r.update(outcome="pass"))
    for _ in range(2):
        doc, _err = report_json(cli, tmp_path, ev)
        assert len(doc["damaged"]) == 1 and doc["summary"]["passed"] == 1
    (folder / "grade.json").write_bytes(original)
    doc, err = report_json(cli, tmp_path, ev)
    assert doc["damaged"] == [] and err == ""
    assert doc["summary"]["graded"] == 2


def test_each_command_in_one_process_has_its_own_damage_list(cli, tmp_path: Path):
    """Commands run in-process (click's CliRunner; `serve` is one long command) each say
    what they left out, and nothing of it is carried into the next (store/scope.py)."""
    from click.testing import CliRunner

    from smevals.cli import cli as group
    from smevals.store import damage

    ev = graded_eval(cli, tmp_path)
    rewrite(only(ev, "grades/default/two/*/*/*"), "grade.json", lambda r: r.update(outcome="pass"))
    (tmp_path / "clean").mkdir()
    clean = graded_eval(cli, tmp_path / "clean")
    runner = CliRunner()
    first = runner.invoke(group, ["report", str(ev)])
    assert (first.exit_code, f"Warning: 1 {WARNING}" in first.stderr) == (0, True)
    second = runner.invoke(group, ["report", str(clean)])
    assert (second.exit_code, second.stderr) == (0, "")
    assert [found for found in damage.found() if str(tmp_path) in found[0]] == []
