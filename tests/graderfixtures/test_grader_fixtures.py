"""`smevals test`: graders over the fixtures beside them, end to end through the CLI."""

from __future__ import annotations

import os
from pathlib import Path
from xml.etree import ElementTree as ET

from smevals.evaldef.load import load_eval
from smevals.grade.version import grader_version
from tests.helpers import make_eval, write

# A program Check that reads the Run's folder like checkers in the wild: it fails when
# output.txt lacks "haiku", scores by the length of an artifact, and tags what it saw.
PROGRAM = """
#!/usr/bin/env python3
import json, os, sys
run = os.environ["SMEVALS_RUN_DIR"]
text = open(os.path.join(run, "output.txt")).read()
extra = os.path.join(run, "notes", "extra.txt")
size = len(open(extra).read()) if os.path.exists(extra) else 0
open("seen.txt", "w").write(os.environ["SMEVALS_TASK_SUBJECT"])
ok = "haiku" in text
print(json.dumps({"score": min(1.0, size / 10), "tags": ["Has Extra"] if size else [],
                  "notes": "mentions haiku" if ok else f"no haiku in {len(text)} chars"}))
sys.exit(0 if ok else 1)
"""

GRADER = """
checks:
  - checker: ./prog.py
    name: program
  - checker: contains
    value: {task: word}
"""


def fixture_eval(tmp_path: Path, cases: dict[str, str], files: dict[str, str] | None = None
                 ) -> Path:
    ev = make_eval(tmp_path / "ev", tasks={"poem": "prompt: a poem\nsubject: rain\n"
                                                   "grading:\n  word: rain\n"},
                   graders={"default": GRADER},
                   files={"configs/echo.sh": "#!/bin/sh\necho hi\n", "graders/prog.py": PROGRAM})
    for name, text in cases.items():
        write(ev / "graders" / "default.fixtures" / f"{name}.yaml", text)
    for rel, text in (files or {}).items():
        write(ev / "graders" / "default.fixtures" / rel, text)
    return ev


def version(ev: Path) -> str:
    return grader_version(load_eval(ev).graders["default"])


GOOD = """
task: poem
output: "a haiku of rain\\n"
files: {notes/extra.txt: data/ten.txt}
expect: pass
score: {min: 1, max: 1}
tags: [has_extra]
"""
NO_HAIKU = """
description: the program Check fails first
task: poem
output_file: data/plain.txt
expect: fail
failing_check: program
notes: no haiku in
absent_tags: [has_extra]
"""
NO_WORD = """
task: {name: inline, subject: snow, grading: {word: snow}}
output: "a haiku of rain\\n"
expect: fail
failing_check: contains
"""
DATA = {"data/ten.txt": "0123456789", "data/plain.txt": "just words\n"}


def test_passing_and_failing_fixtures_match(cli, tmp_path: Path) -> None:
    ev = fixture_eval(tmp_path, {"good": GOOD, "no-haiku": NO_HAIKU, "no-word": NO_WORD}, DATA)
    res = cli("test", "ev", cwd=tmp_path)
    assert (res.code, res.err) == (0, ""), res.both
    assert res.out == (
        f"ev/default (grader version {version(ev)}): 3 case(s)\n"
        "  CASE      EXPECT  GOT   RESULT  FAILING CHECK\n"
        "  good      pass    pass  ok\n"
        "  no-haiku  fail    fail  ok      'program': no haiku in 11 chars\n"
        "  no-word   fail    fail  ok      'contains': output.txt does not contain 'snow'\n"
        "3 case(s): 3 ok, 0 mismatch(es)\n")
    assert not (ev / "results").exists()             # no store read or written
    assert not list(tmp_path.glob("**/seen.txt"))    # each workspace was temporary


def test_a_mismatch_exits_1_with_every_reason(cli, tmp_path: Path) -> None:
    wrong = GOOD.replace("expect: pass", "expect: fail").replace("max: 1", "max: 0.5") \
        .replace("tags: [has_extra]", "tags: [other]\nabsent_tags: [Has Extra]\n"
                 "failing_check: contains\nnotes: nothing")
    fixture_eval(tmp_path, {"wrong": wrong, "no-word": NO_WORD,
                            "wrong-notes": NO_WORD + "notes: snowfall\n"}, DATA)
    res = cli("test", cwd=tmp_path / "ev")
    assert res.code == 1, res.both
    assert res.out.splitlines()[1:] == [
        "  CASE         EXPECT  GOT   RESULT    FAILING CHECK",
        "  no-word      fail    fail  ok        'contains': output.txt does not contain 'snow'",
        "  wrong-notes  fail    fail  MISMATCH  'contains': output.txt does not contain 'snow'",
        "      the failing check's notes do not contain 'snowfall'",
        "  wrong        fail    pass  MISMATCH",
        "      expected fail, got pass",
        "      expected check 'contains' to fail, it passed",
        "      score 1 is outside [1, 0.5]",
        "      tag 'other' missing",
        "      tag 'has_extra' present",
        "3 case(s): 1 ok, 2 mismatch(es)"]
    assert res.err == "Error: 2 of 3 fixture(s) did not match\n"


def test_junit_output_parses(cli, tmp_path: Path) -> None:
    wrong = NO_WORD.replace("expect: fail", "expect: pass")
    fixture_eval(tmp_path, {"good": GOOD, "wrong": wrong}, DATA)
    res = cli("test", "ev", "--junit", "out/junit.xml", cwd=tmp_path)
    assert res.code == 2 and "--junit: cannot write out/junit.xml" in res.err
    res = cli("test", "ev", "--junit", "junit.xml", cwd=tmp_path)
    assert res.code == 1, res.both
    root = ET.parse(tmp_path / "junit.xml").getroot()
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "2", "1")
    [suite] = root
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == \
        ("ev/default", "2", "1")
    cases = {c.get("name"): c for c in suite}
    assert cases["good"].find("failure") is None
    failure = cases["wrong"].find("failure")
    assert failure is not None and failure.get("message") == "expected pass, got fail"
    assert failure.text == ("expected pass, got fail\n"
                            "failed check 'contains': output.txt does not contain 'snow'")
    assert cases["wrong"].get("file") == "ev/graders/default.fixtures/wrong.yaml"


def test_paths_that_leave_the_fixtures_folder_are_refused(cli, tmp_path: Path) -> None:
    secret = write(tmp_path / "secret.txt", "top secret haiku\n")
    ev = fixture_eval(tmp_path, {
        "dotdot": "task: poem\noutput_file: ../../tasks/poem.yaml\nexpect: pass\n",
        "absolute": f"task: poem\noutput: x\nfiles: {{a.txt: {secret}}}\nexpect: pass\n",
        "link": "task: poem\noutput_file: data/link.txt\nexpect: pass\n",
        "target": "task: poem\noutput: x\nfiles: {../up.txt: data/ten.txt}\nexpect: fail\n",
    }, DATA)
    os.symlink(secret, ev / "graders" / "default.fixtures" / "data" / "link.txt")
    outside = write(tmp_path / "outside.yaml", "task: poem\noutput: x\nexpect: pass\n")
    os.symlink(outside, ev / "graders" / "default.fixtures" / "a-link.yaml")
    res = cli("test", "ev", cwd=tmp_path)
    assert (res.code, res.out) == (2, ""), res.both
    where = "ev/graders/default.fixtures"
    assert res.err == (
        f"Error: {where}/a-link.yaml:1:1: the case file is a link to a file outside the "
        "fixtures folder (cases stay inside it)\n"
        f"{where}/absolute.yaml:3:16: files.a.txt: '{secret}' is outside the fixtures "
        f"folder {where} (paths stay inside it)\n"
        f"{where}/dotdot.yaml:2:14: output_file: '../../tasks/poem.yaml' is outside the "
        f"fixtures folder {where} (paths stay inside it)\n"
        f"{where}/link.yaml:2:14: output_file: 'data/link.txt' is outside the fixtures "
        f"folder {where} (paths stay inside it)\n"
        f"{where}/target.yaml:3:9: files.../up.txt: '../up.txt' is not a plain relative file "
        "name for the Run's folder (no '..', not absolute, not output.txt or run.json)\n")


def test_a_bad_fixture_exits_2_before_any_checker_runs(cli, tmp_path: Path) -> None:
    fixture_eval(tmp_path, {
        "good": GOOD,
        "unknown-key": "task: poem\noutput: x\nexpect: pass\nexpected: fail\n",
        "bad-expect": "task: poem\noutput: x\nexpect: maybe\n",
        "no-task": "task: nope\noutput: x\nexpect: pass\n",
        "both": "task: poem\noutput: x\noutput_file: data/ten.txt\nexpect: pass\n",
        "missing": "task: poem\noutput_file: data/none.txt\nexpect: pass\n",
        "broken": "task: [poem\n",
        "usage": "task: poem\noutput: x\nexpect: pass\nusage:\n  latency_ms: slow\n",
    }, DATA)
    res = cli("test", "ev", cwd=tmp_path)
    assert (res.code, res.out) == (2, ""), res.both
    where = "ev/graders/default.fixtures"
    assert res.err.splitlines() == [
        f"Error: {where}/bad-expect.yaml:3:9: expect: must be one of pass, fail, error, "
        "got 'maybe'",
        f"{where}/both.yaml:1:1: give the Run's output as exactly one of output or output_file",
        f"{where}/broken.yaml:2:1: invalid YAML: did not find expected ',' or ']'",
        f"{where}/missing.yaml:2:14: output_file: no file 'data/none.txt' in {where}",
        f"{where}/no-task.yaml:1:7: task: no Task named 'nope' in ev (tasks: poem)",
        f"{where}/unknown-key.yaml:4:1: expected: unknown key 'expected' (allowed: "
        "absent_tags, description, expect, failing_check, files, label, model, notes, "
        "output, output_file, score, tags, tampering, task, usage)",
        f"{where}/usage.yaml:5:15: usage.latency_ms: does not match usage.schema.json: "
        "'slow' is not of type 'number'"]
    assert not list(tmp_path.glob("**/seen.txt"))


def test_no_fixtures_is_bad_input(cli, tmp_path: Path) -> None:
    make_eval(tmp_path / "ev")
    res = cli("test", "ev", cwd=tmp_path)
    assert (res.code, res.out) == (2, "")
    assert res.err == ("Error: no fixtures to test:\n"
                       "  ev: no fixtures (put cases in ev/graders/default.fixtures)\n")
    res = cli("test", "ev", "-g", "nope", cwd=tmp_path)
    assert res.code == 2
    assert res.err == "Error: ev: no grader named 'nope' - available graders: default\n"


def test_an_eval_without_fixtures_beside_one_with_them_is_noted(cli, tmp_path: Path) -> None:
    fixture_eval(tmp_path / "suite", {"good": GOOD}, DATA)
    make_eval(tmp_path / "suite" / "other")
    res = cli("test", "suite", cwd=tmp_path)
    assert res.code == 0, res.both
    assert res.err == ("note: other: no fixtures (put cases in "
                       "suite/other/graders/default.fixtures)\n")
    assert res.out.endswith("1 case(s): 1 ok, 0 mismatch(es)\n")


def test_the_init_template_ships_fixtures_that_pass(cli, tmp_path: Path) -> None:
    assert cli("init", "x", cwd=tmp_path).code == 0
    res = cli("test", "x", cwd=tmp_path)
    assert res.code == 0, res.both
    cases = res.out.splitlines()[2:-1]
    assert [line.split()[:4] for line in cases] == [
        ["capital", "pass", "pass", "ok"], ["sentence", "fail", "fail", "ok"],
        ["wrong-city", "fail", "fail", "ok"]]


def test_a_missing_optional_dependency_is_named_not_counted_as_mismatches(
        cli, tmp_path: Path, monkeypatch) -> None:
    """pelican's render_svg needs the `svg` extra: without resvg the fixtures that reach it
    are not run, and the command says what to install (exit 2), instead of "3 mismatches"
    (issue 37)."""
    import importlib.util
    import shutil

    import smevals

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "resvg" else real(name, *a))
    suite = tmp_path / "pelican"
    shutil.copytree(Path(smevals.__file__).parent / "suites" / "pelican", suite)
    res = cli("test", str(suite), "--junit", str(tmp_path / "junit.xml"))
    need = "render_svg needs resvg, which is not installed: pip install 'resvg>=0.2'"
    assert res.code == 2, res.both
    assert "MISMATCH" not in res.out and "mismatch(es), " in res.out
    not_run = [line for line in res.out.splitlines() if " NOT RUN " in line]
    assert not_run and f"      {need}" in res.out.splitlines()
    total = res.out.splitlines()[-1]
    assert total.endswith(f", 0 mismatch(es), {len(not_run)} not run"), total
    assert res.err == (f"Error: {len(not_run)} of {total.split()[0]} fixture(s) could not be "
                       "graded here, a Check needs an optional dependency that is not "
                       f"installed:\n  {need}\n")
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    assert junit.get("errors") == str(len(not_run)) and junit.get("failures") == "0"
