"""Issue 24 items 4-6: what a pull request commits is hostile. Any object `verify` would
reject is damage: never graded, never counted, named; `merge` leaves a destination that
passes `verify`."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from smevals.store.read import Store
from tests.conftest import make_eval, write
from tests.store.helpers import commit_all, run_record, write_grade, write_run

SECRET = "AKIA-SECRET-7f3e9c"
# A checker program that says what it read: whatever output.txt holds lands in grade.json.
TELLER = """
#!/bin/sh
printf '{"notes": "%s"}\\n' "$(cat "$SMEVALS_RUN_DIR/output.txt")"
"""
GRADER = "checks:\n  - checker: ./tell.sh\n  - checker: contains\n    value: one\n"
WARNING = ("Warning: {n} damaged object(s) left out (nothing in them was counted); run "
           "`smevals verify` for details:\n")


def told_eval(cli, tmp_path: Path) -> Path:
    """Two Runs (one, two), not graded: grading one passes, two fails."""
    ev = make_eval(tmp_path / "ev", graders={"default": GRADER},
                   files={"configs/echo.sh": "#!/bin/sh\nprintf 'answer %s\\n' "
                          "\"$SMEVALS_TASK\"\n", "graders/tell.sh": TELLER})
    res = cli("run", str(ev), cwd=tmp_path)
    assert res.code == 0, res.both
    return ev


def run_of(ev: Path, task: str) -> Path:
    found = sorted((ev / "results" / "runs" / task).glob("*/*/*"))
    assert len(found) == 1, found
    return found[0]


def rel(ev: Path, folder: Path) -> str:
    return str(folder.relative_to(ev / "results"))


def swap_output(run: Path, make) -> None:
    """Replace the Run's output.txt, as a commit would (its folder made writable)."""
    run.chmod(0o755)
    (run / "output.txt").unlink()
    make(run / "output.txt")


def everything_under(*folders: Path) -> bytes:
    return b"".join(p.read_bytes() for folder in folders for p in folder.rglob("*")
                    if p.is_file() and not p.is_symlink())


def test_a_symlinked_output_is_never_graded_and_its_target_never_read(cli, tmp_path: Path):
    ev = told_eval(cli, tmp_path)
    credentials = write(tmp_path / "credentials", f"aws_secret_access_key = {SECRET}\n")
    run = run_of(ev, "one")
    swap_output(run, lambda p: p.symlink_to(credentials))
    why = "output.txt: a symlink where the record lists a regular file"
    for command in ("grade", "regrade"):
        res = cli(command, str(ev), cwd=tmp_path)
        assert res.code == 1, res.both
        assert res.out.splitlines()[-2:] == [
            "Graded 1 Run(s): 0 pass, 1 fail",
            "Skipped 1 damaged Run(s) (named below; see `smevals verify`)"], res.out
        assert res.err == WARNING.format(n=1) + f"  {ev}/results/{rel(ev, run)}: {why}\n" \
            "Error: 1 of 1 Run(s) graded as fail\n"
    res = cli("run", str(ev), "-g", cwd=tmp_path)           # new Runs graded, not the damaged
    assert res.code == 1, res.both
    assert f"  {ev}/results/{rel(ev, run)}: {why}\n" in res.err
    assert SECRET.encode() not in everything_under(ev / "results", tmp_path / "_cache")
    tasks = sorted(g.record["run"]["task"] for g in Store(ev / "results").grades())
    assert tasks == ["one", "two", "two", "two"]
    assert all(g.record["run"]["rel"] != rel(ev, run) for g in Store(ev / "results").grades())
    res = cli("report", str(ev), "--json", cwd=tmp_path)
    assert json.loads(res.out)["evals"][0]["damaged"] == [{"path": rel(ev, run),
                                                           "problem": why}]


def test_an_output_edited_to_the_same_size_is_refused_before_grading(cli, tmp_path: Path):
    """Readers check sizes; the full hash is checked on the copy the checkers read."""
    ev = told_eval(cli, tmp_path)
    run = run_of(ev, "two")
    swap_output(run, lambda p: p.write_text("answer one\n"))     # as long as "answer two"
    res = cli("grade", str(ev), cwd=tmp_path)
    assert res.code == 0, res.both                  # as for every reader: named, not failed
    assert res.out.splitlines()[-2:] == [
        "Graded 1 Run(s): 1 pass, 0 fail",
        "Skipped 1 damaged Run(s) (named below; see `smevals verify`)"]
    assert res.err == WARNING.format(n=1) + f"  {ev}/results/{rel(ev, run)}: output.txt: " \
        "content changed: sha256 does not match the record\n"
    assert [g.record["run"]["task"] for g in Store(ev / "results").grades()] == ["one"]


def test_the_checkers_read_a_private_copy_of_the_run(cli, tmp_path: Path):
    ev = told_eval(cli, tmp_path)
    write(ev / "graders" / "tell.sh", "#!/bin/sh\nprintf '{\"notes\": \"%s\"}\\n' "
          "\"$SMEVALS_RUN_DIR\"\n", executable=True)
    assert cli("grade", str(ev), cwd=tmp_path).code == 1
    seen = {g.record["checks"][0]["notes"] for g in Store(ev / "results").grades()}
    assert len(seen) == 2 and not any(str(ev) in s for s in seen)
    assert not any(Path(s).exists() for s in seen)          # removed after grading


def edited_report(cli, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    res = cli("report", "ev", "--json", *args, cwd=tmp_path)
    return res.code, json.loads(res.out)["evals"][0], res.err


def test_an_edited_output_is_not_counted_in_the_tree_or_at_a_revision(cli, tmp_path: Path):
    ev = told_eval(cli, tmp_path)
    assert cli("grade", str(ev), cwd=tmp_path).code == 1
    run = run_of(ev, "two")
    swap_output(run, lambda p: p.write_text("the answer is one\n"))
    commit = commit_all(tmp_path)
    why = "output.txt: size changed: 11 bytes recorded, 18 found"
    for args in ((), ("--rev", "HEAD")):
        code, doc, err = edited_report(cli, tmp_path, *args)
        assert code == 0, err
        assert doc["summary"]["graded"] == 1 and doc["summary"]["passed"] == 1
        assert doc["damaged"] == [{"path": rel(ev, run), "problem": why}]
        label = f"{commit}:ev/results" if args else "ev/results"
        assert err == WARNING.format(n=1) + f"  {label}/{rel(ev, run)}: {why}\n", err
    res = cli("report", "ev", cwd=tmp_path)
    assert "1 damaged object(s) left out, nothing in them counted (see `smevals verify`)" \
        in res.out


def test_a_moved_grade_and_a_grade_of_the_wrong_time_are_not_counted(cli, tmp_path: Path):
    ev = told_eval(cli, tmp_path)
    assert cli("grade", str(ev), cwd=tmp_path).code == 1
    grades = ev / "results" / "grades" / "default"
    two = next((grades / "two").glob("*/*/*"))
    moved = grades / "one" / "default" / "m1" / two.name
    two.rename(moved)                                   # grade of two filed under one
    one = next(p for p in moved.parent.iterdir() if p != moved)
    renamed = one.parent / ("20200101T000000Z" + one.name[16:])
    one.rename(renamed)                                 # its hash, another time
    commit_all(tmp_path)
    damaged = sorted([
        {"path": rel(ev, moved), "problem": "filed under grades/default/one/default/m1, but "
         "its record belongs under grades/default/two/default/m1"},
        {"path": rel(ev, renamed), "problem": f"folder timestamp 20200101T000000Z does not "
         f"match the record's graded ({one.name[:16]})"}], key=lambda d: d["path"])
    for args in ((), ("--rev", "HEAD")):
        code, doc, err = edited_report(cli, tmp_path, *args)
        assert doc["summary"]["graded"] == 0, doc["summary"]
        assert sorted(doc["damaged"], key=lambda d: d["path"]) == damaged


# merge ---------------------------------------------------------------------------------

def merged(cli, tmp_path: Path, source: Path) -> tuple[int, str, str]:
    into = tmp_path / "into"
    res = cli("merge", str(source), "--into", str(into), cwd=tmp_path)
    check = cli("verify", str(into), cwd=tmp_path)
    assert check.code == 0, check.both
    return res.code, res.out, res.err


def test_merge_refuses_the_grades_of_a_run_it_refuses(cli, tmp_path: Path):
    src = tmp_path / "src"
    good, bad = write_run(src, 0), write_run(src, 1)
    write_grade(src, good, 0)
    grade = write_grade(src, bad, 1)
    (src / bad.rel).chmod(0o755)
    (src / bad.rel / "output.txt").chmod(0o644)
    (src / bad.rel / "output.txt").write_text("edited\n")
    code, out, err = merged(cli, tmp_path, src)
    assert code == 1
    assert out.splitlines()[-1] == "Merged 1 store(s): 2 object(s) copied, 0 already there, " \
                                   "2 refused"
    assert err.splitlines()[:2] == [
        f"  refused {bad.rel}: output.txt: size changed: 6 bytes recorded, 7 found",
        f"  refused {grade.rel}: folder: the Run it grades is not in {tmp_path / 'into'} "
        f"(refused or missing): {bad.rel}"]


def test_merge_copies_a_sound_run_with_links_and_special_files(cli, tmp_path: Path):
    src = tmp_path / "src"
    staging = Store(src).stage("run")
    (staging.dir / "output.txt").write_text("out\n")
    (staging.dir / "tools").mkdir()
    os.symlink("../output.txt", staging.dir / "tools" / "link")
    os.symlink("/etc/passwd", staging.dir / "passwd")
    os.mkfifo(staging.dir / "pipe")
    record = run_record()
    written = staging.commit(record, ["t1", "c", "m"])
    assert cli("verify", str(src), cwd=tmp_path).code == 0
    code, out, err = merged(cli, tmp_path, src)
    assert (code, err) == (0, ""), err
    assert out.splitlines()[-1] == "Merged 1 store(s): 1 object(s) copied, 0 already there, " \
                                   "0 refused"
    copy = tmp_path / "into" / written.rel
    assert os.readlink(copy / "passwd") == "/etc/passwd"
    assert os.readlink(copy / "tools" / "link") == "../output.txt"


def test_merge_names_a_symlinked_object_folder_and_refuses_it(cli, tmp_path: Path):
    src = tmp_path / "src"
    run = write_run(src, 0)
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(src / run.rel, elsewhere, symlinks=True)
    linked = (src / run.rel).parent / ("20260102T030405Z-" + "a" * 12)
    linked.symlink_to(elsewhere)
    code, out, err = merged(cli, tmp_path, src)
    assert code == 1
    assert out.splitlines()[-1] == "Merged 1 store(s): 1 object(s) copied, 0 already there, " \
                                   "1 refused"
    assert err.splitlines()[0] == f"  refused {linked.relative_to(src)}: not an object folder " \
                                  "(a symlink, a file or a hidden folder): not copied"


# issue 34 item 5: named, never only skipped ------------------------------------------------

LINKED = ("a symlink to {!r} where a folder of the store belongs: never followed (an object "
          "is a real folder)")


def test_a_symlinked_run_folder_is_named_by_report_and_grade(cli, tmp_path: Path):
    ev = told_eval(cli, tmp_path)
    run = run_of(ev, "two")
    elsewhere = tmp_path / "elsewhere"
    run.rename(elsewhere)
    run.symlink_to(elsewhere)
    why = LINKED.format(str(elsewhere))
    res = cli("grade", str(ev), cwd=tmp_path)
    assert res.code == 0, res.both
    assert res.out.splitlines()[-2:] == [
        "Graded 1 Run(s): 1 pass, 0 fail",
        "Skipped 1 damaged Run(s) (named below; see `smevals verify`)"], res.out
    assert res.err == WARNING.format(n=1) + f"  {ev}/results/{rel(ev, run)}: {why}\n"
    assert [g.record["run"]["task"] for g in Store(ev / "results").grades()] == ["one"]
    code, doc, err = edited_report(cli, tmp_path)
    assert (code, doc["summary"]["graded"]) == (0, 1)
    assert doc["damaged"] == [{"path": rel(ev, run), "problem": why}]
    assert err == WARNING.format(n=1) + f"  ev/results/{rel(ev, run)}: {why}\n"
    commit = commit_all(tmp_path)                       # a commit holds the link itself
    code, doc, err = edited_report(cli, tmp_path, "--rev", "HEAD")
    said = ("a symlink where a folder of the store belongs: never followed (an object is a "
            "real folder)")
    assert doc["damaged"] == [{"path": rel(ev, run), "problem": said}]
    assert err == WARNING.format(n=1) + f"  {commit}:ev/results/{rel(ev, run)}: {said}\n"
    assert cli("verify", str(ev)).code == 1


def test_a_grade_whose_run_is_missing_is_named_by_report_and_grade(cli, tmp_path: Path):
    ev = told_eval(cli, tmp_path)
    assert cli("grade", str(ev), cwd=tmp_path).code == 1
    run = run_of(ev, "two")
    (grade,) = (ev / "results" / "grades" / "default" / "two").glob("*/*/*")
    shutil.rmtree(run.parent.parent.parent)
    why = f"the Run it grades is missing: {rel(ev, run)}"
    verify = cli("verify", str(ev))
    assert f"{rel(ev, grade)}: {why}\n" in verify.out
    res = cli("grade", str(ev), cwd=tmp_path)
    assert res.code == 0, res.both
    assert res.err == WARNING.format(n=1) + f"  {ev}/results/{rel(ev, grade)}: {why}\n"
    commit = commit_all(tmp_path)
    for args, label in (((), "ev/results"), (("--rev", "HEAD"), f"{commit}:ev/results")):
        code, doc, err = edited_report(cli, tmp_path, *args)
        assert (code, doc["summary"]["graded"]) == (0, 1)
        assert doc["damaged"] == [{"path": rel(ev, grade), "problem": why}]
        assert err == WARNING.format(n=1) + f"  {label}/{rel(ev, grade)}: {why}\n"


def test_diff_lists_a_damaged_run_as_damage_not_as_a_removed_task(cli, tmp_path: Path):
    ev = told_eval(cli, tmp_path)
    assert cli("grade", str(ev), cwd=tmp_path).code == 1
    commit_all(tmp_path, "graded")
    run = run_of(ev, "two")
    swap_output(run, lambda p: p.write_text("the answer is one\n"))
    commit_all(tmp_path, "edited")
    res = cli("diff", "HEAD~1", "HEAD", "ev", cwd=tmp_path)
    assert res.code == 0, res.both
    assert "- Removed Runs: none\n- Removed tasks: none\n" in res.out
    assert (f"- Runs damaged in B (left out there, not removed; see `smevals verify`): 1 "
            f"({run.name})\n") in res.out
    doc = json.loads(cli("diff", "HEAD~1", "HEAD", "ev", "--format", "json",
                         cwd=tmp_path).out)
    (diff,) = doc["evals"]
    assert diff["removed"] == {"runs": [], "tasks": [], "models": [], "configs": [],
                               "runs_by_pair": [], "damaged": [run.name]}
    assert diff["added"]["damaged"] == []
    assert [d["path"] for d in doc["damaged"]] == [rel(ev, run)]
