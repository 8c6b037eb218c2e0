"""Grading end to end: semantics, the checker-program contract, versions, grade and regrade."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import grade_records as grades
from tests.helpers import make_eval, write

EMIT = """
#!/usr/bin/env python3
import os, sys
sys.stdout.write(os.environ.get("SMEVALS_CHECK_OUT", ""))
sys.stderr.write(os.environ.get("SMEVALS_CHECK_ERR", ""))
if os.environ.get("SMEVALS_CHECK_MAKE"):
    open(os.environ["SMEVALS_CHECK_MAKE"], "w").write("made")
sys.exit(int(os.environ.get("SMEVALS_CHECK_CODE", "0")))
"""


def graded_eval(tmp_path: Path, grader: str, tasks: dict[str, str] | None = None) -> Path:
    ev = make_eval(tmp_path / "ev", tasks=tasks or {"one": "prompt: hello one\n"},
                   graders={"default": grader},
                   files={"configs/echo.sh": "#!/bin/sh\necho \"$SMEVALS_MODEL says: "
                                             "$SMEVALS_PROMPT\"\n",
                          "graders/emit.py": EMIT})
    return ev


def emit(out: str = "", code: int = 0, **extra: object) -> str:
    lines = ["  - checker: ./emit.py", f"    out: {json.dumps(out)}", f"    code: {code}"]
    lines += [f"    {k}: {json.dumps(v)}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def grade_one(cli, tmp_path: Path, checks: str, scoring: str = "") -> dict[str, Any]:
    ev = graded_eval(tmp_path, "checks:\n" + checks + scoring)
    res = cli("run", str(ev), "-g")
    assert res.code in (0, 1), res.err
    (grade,) = grades(ev)
    return grade


def test_required_failure_halts_and_skips_the_rest(cli, tmp_path: Path) -> None:
    grade = grade_one(cli, tmp_path, emit(code=1, required=True) + emit('{"score": 1}'))
    assert grade["outcome"] == "fail"
    assert grade["score"] is None
    assert grade["checks"][1] == {"checker": "./emit.py", "skipped": True}
    assert grade["checks"][0]["ok"] is False
    assert grade["checks"][0]["notes"] == "checker exited with status 1"


def test_non_required_failure_continues_and_last_score_wins(cli, tmp_path: Path) -> None:
    grade = grade_one(cli, tmp_path, emit('{"score": 0.2}', code=1) + emit('{"score": 0.7}'))
    assert (grade["outcome"], grade["score"]) == ("fail", 0.7)
    assert [c["ok"] for c in grade["checks"]] == [False, True]


def test_unscored_failure_leaves_grade_unscored(cli, tmp_path: Path) -> None:
    grade = grade_one(cli, tmp_path, emit(code=1) + emit('{"score": 0.9}'))
    assert (grade["outcome"], grade["score"]) == ("fail", None)


@pytest.mark.parametrize(("score", "threshold", "outcome"),
                         [(0.4, 0.5, "fail"), (0.5, 0.5, "pass"), (0.9, None, "pass")])
def test_pass_threshold(cli, tmp_path: Path, score: float, threshold: float | None,
                        outcome: str) -> None:
    scoring = f"scoring:\n  pass_threshold: {threshold}\n" if threshold is not None else ""
    grade = grade_one(cli, tmp_path, emit(json.dumps({"score": score})), scoring)
    assert (grade["outcome"], grade["score"]) == (outcome, score)


def test_all_ok_without_score_or_threshold_passes(cli, tmp_path: Path) -> None:
    grade = grade_one(cli, tmp_path, emit(), "scoring:\n  pass_threshold: 0.5\n")
    assert (grade["outcome"], grade["score"]) == ("pass", None)


@pytest.mark.parametrize(("method", "expected"),
                         [("last", 0.5), ("mean", 0.5), ("min", 0.2), ("weighted", 0.62)])
def test_scoring_methods(cli, tmp_path: Path, method: str, expected: float) -> None:
    checks = (emit('{"score": 0.2}', weight=1) + emit('{"score": 0.8}', weight=3)
              + emit('{"score": 0.5}', weight=1))
    grade = grade_one(cli, tmp_path, checks, f"scoring:\n  method: {method}\n")
    assert grade["score"] == pytest.approx(expected)
    assert grade["method"] == method


def test_per_check_minimum(cli, tmp_path: Path) -> None:
    grade = grade_one(cli, tmp_path, emit('{"score": 0.4}', min=0.5) + emit(min=0.5))
    assert grade["outcome"] == "fail"
    assert grade["checks"][0]["notes"] == "score 0.4 is below the check's min 0.5"
    assert grade["checks"][1]["notes"] == "the check sets min 0.5 but produced no score"


def test_creates_satisfied_and_missing(cli, tmp_path: Path) -> None:
    grade = grade_one(cli, tmp_path, emit(make="a.txt", creates="a.txt")
                      + emit(creates=["a.txt", "b.txt"]))
    assert grade["checks"][0]["ok"] is True
    assert grade["checks"][1]["ok"] is False
    assert grade["checks"][1]["notes"] == "did not create promised file(s): b.txt"
    assert "a.txt" in [f["path"] for f in grade["files"]]


def test_tags_normalised_and_unioned_metrics_kept(cli, tmp_path: Path) -> None:
    first = json.dumps({"tags": ["Wearing A Hat", "ok!", ""], "metrics": {"lines": 3}})
    second = json.dumps({"tags": ["zebra", "wearing_a_hat"], "metrics": {"valid": True},
                         "notes": "fine", "extra": 1, "details": {"k": "v"}})
    grade = grade_one(cli, tmp_path, emit(first) + emit(second))
    assert grade["tags"] == ["ok", "wearing_a_hat", "zebra"]
    assert grade["metrics"] == {"lines": 3, "valid": True}
    check = grade["checks"][1]
    assert check["notes"] == "fine"
    assert check["details"] == {"k": "v", "extra": 1}


def test_non_json_stdout_is_kept_and_stderr_becomes_notes(cli, tmp_path: Path) -> None:
    grade = grade_one(cli, tmp_path, emit("just text\n") + emit(code=2, err="it broke\n"))
    assert grade["checks"][0]["details"] == {"output": "just text"}
    assert grade["checks"][0]["ok"] is True
    assert grade["checks"][1]["notes"] == "it broke"


FAIL_CLOSED = [
    ('"5"', "checker printed JSON that is not an object (int)"),
    ('{"score": 1.5}', "score must be from 0 to 1, got 1.5"),
    ('{"score": "high"}', "score must be a number from 0 to 1, got 'high'"),
    ('{"score": true}', "score must be a number from 0 to 1, got True"),
    ('{"metrics": {"x": "a"}}', "metric 'x' must be a finite number or a boolean, got 'a'"),
    ('{"metrics": [1]}', "metrics must be an object, got list"),
    ('{"tags": "a"}', "tags must be a list of strings"),
]


@pytest.mark.parametrize(("out", "notes"), FAIL_CLOSED)
def test_bad_checker_output_fails_closed(cli, tmp_path: Path, out: str, notes: str) -> None:
    grade = grade_one(cli, tmp_path, emit(json.loads(out) if out.startswith('"') else out))
    assert grade["outcome"] == "fail"
    assert grade["checks"][0]["ok"] is False
    assert grade["checks"][0]["notes"] == notes


def test_missing_non_executable_huge_binary_and_slow_checkers(cli, tmp_path: Path) -> None:
    ev = graded_eval(tmp_path, "checks:\n  - checker: ./emit.py\n")
    write(ev / "graders" / "big.py", "#!/usr/bin/env python3\nprint('x' * 2_000_000)\n",
          executable=True)
    write(ev / "graders" / "bin.py", "#!/usr/bin/env python3\nimport sys\n"
          "sys.stdout.buffer.write(b'\\xff\\xfe')\n", executable=True)
    write(ev / "graders" / "slow.sh", "#!/bin/sh\nsleep 30 &\nwait\n", executable=True)
    write(ev / "graders" / "plain.py", "print(1)\n")
    write(ev / "graders" / "default.yaml", "checks:\n  - checker: ./big.py\n"
          "  - checker: ./bin.py\n  - checker: ./slow.sh\n    timeout: 1\n"
          "  - checker: ./plain.py\n")
    assert cli("run", str(ev)).code == 0
    (ev / "graders" / "plain.py").chmod(0o644)
    res = cli("grade", str(ev))
    assert res.code == 2
    assert "plain.py is not executable" in res.err
    assert grades(ev) == [] if (ev / "results" / "grades").exists() else True
    (ev / "graders" / "plain.py").chmod(0o755)
    assert cli("grade", str(ev)).code == 1
    (grade,) = grades(ev)
    notes = [c["notes"] for c in grade["checks"]]
    assert notes[0] == ("checker printed 2000001 bytes, over the 1048576-byte cap "
                        "(kept truncated)")
    assert len(grade["checks"][0]["details"]["output"]) == 1048576
    assert notes[1] == "checker output is not valid UTF-8"
    assert notes[2] == ("checker timed out after 1s; the checker and every process it started "
                        "were killed")
    assert grade["checks"][3]["ok"] is False


def test_checker_environment_contract(cli, tmp_path: Path) -> None:
    dump = ("#!/bin/sh\nenv | grep '^SMEVALS_' | grep -v CACHE_DIR | sort > env.txt\n"
            "pwd > cwd.txt\n")
    ev = graded_eval(tmp_path, "checks:\n  - checker: ./dump.sh\n    flavour: salty\n",
                     tasks={"one": "prompt: hi\ngrading:\n  expected: bye\n"})
    write(ev / "graders" / "dump.sh", dump, executable=True)
    assert cli("run", str(ev), "-g").code == 0
    (gdir,) = [p.parent for p in (ev / "results" / "grades").rglob("grade.json")]
    env = dict(line.split("=", 1) for line in (gdir / "env.txt").read_text().splitlines())
    (run_dir,) = [p.parent for p in (ev / "results" / "runs").rglob("run.json")]
    copy = env["SMEVALS_RUN_DIR"]           # a private copy of the Run, checked first
    assert not copy.startswith(str(ev)) and Path(copy).name.startswith("smevals-run-")
    assert env["SMEVALS_TASK"] == "one"
    assert env["SMEVALS_TASK_EXPECTED"] == "bye"
    assert env["SMEVALS_TASK_PROMPT"] == env["SMEVALS_PROMPT"] == "hi"
    assert env["SMEVALS_CHECK_FLAVOUR"] == "salty"
    assert env["SMEVALS_CHECK_CHECKER"] == "./dump.sh"
    assert json.loads(env["SMEVALS_CHECK"]) == {"checker": "./dump.sh", "flavour": "salty"}
    assert env["SMEVALS_MODEL"] == "m1"
    assert env["SMEVALS_EVAL_DIR"] == str(ev)
    assert (gdir / "cwd.txt").read_text().strip().startswith(str(ev / "results" / ".staging"))
    assert (gdir / "grader.yaml").read_bytes() == (ev / "graders" / "default.yaml").read_bytes()


def _hashes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file() and ".staging" not in p.parts}


def test_grade_skips_up_to_date_and_new_versions_regrade(cli, tmp_path: Path) -> None:
    ev = graded_eval(tmp_path, "checks:\n" + emit('{"score": 1}'),
                     tasks={"one": "prompt: a\n", "two": "prompt: b\n"})
    assert cli("run", str(ev), "-n", "2", "-g").code == 0
    assert len(grades(ev)) == 4
    before = _hashes(ev / "results")
    res = cli("grade", str(ev))
    assert res.out.endswith("Graded 0 Run(s): 0 pass, 0 fail\n"
                            "Skipped 4 Run(s) already graded by this grader version\n")
    # a formatting-only edit keeps the version
    write(ev / "graders" / "default.yaml", "# a comment\nchecks:\n" + emit('{"score": 1}'))
    assert "Graded 0 Run(s)" in cli("grade", str(ev)).out
    # editing the checker script makes a new version: every Run is graded again
    write(ev / "graders" / "emit.py", EMIT + "# edited\n", executable=True)
    res = cli("grade", str(ev))
    assert res.code == 0
    assert "Graded 4 Run(s): 4 pass, 0 fail\n" in res.out
    assert ("4 Run(s) graded again: they had Grades only from older grader versions (the old "
            "Grades are kept)\n") in res.out
    assert len(grades(ev)) == 8
    after = _hashes(ev / "results")
    assert {k: v for k, v in after.items() if k in before} == before
    versions = {g["grader"]["version"] for g in grades(ev)}
    assert len(versions) == 2


def test_answer_key_change_regrades_only_affected_runs(cli, tmp_path: Path) -> None:
    grader = "checks:\n  - checker: contains\n    value: {task: expected}\n"
    ev = graded_eval(tmp_path, grader,
                     tasks={"one": "prompt: x\ngrading:\n  expected: says\n",
                            "two": "prompt: y\ngrading:\n  expected: says\n"})
    assert cli("run", str(ev), "-g").code == 0
    write(ev / "tasks" / "two.yaml", "prompt: y\ngrading:\n  expected: nope\n")
    res = cli("grade", str(ev))
    assert res.code == 1
    assert "Graded 1 Run(s): 0 pass, 1 fail" in res.out
    assert "Skipped 1 Run(s) already graded by this grader version" in res.out
    assert "1 pass->fail, 0 fail->pass" in res.out


def test_regrade_filters_and_summary(cli, tmp_path: Path) -> None:
    ev = graded_eval(tmp_path, "checks:\n  - checker: contains\n    value: says\n",
                     tasks={"one": "prompt: a\n", "two": "prompt: b\n"})
    assert cli("run", str(ev), "-m", "a", "-m", "b", "-g").code == 0
    before = _hashes(ev / "results")
    res = cli("regrade", str(ev), "-t", "one", "-m", "a")
    assert res.code == 0
    assert "Graded 1 Run(s): 1 pass, 0 fail" in res.out
    write(ev / "graders" / "default.yaml", "checks:\n  - checker: contains\n    value: zzz\n")
    res = cli("regrade", str(ev), "--outcome", "pass", "-m", "b")
    assert res.code == 1
    assert "Against each Run's previous Grade: 2 pass->fail, 0 fail->pass\n" in res.out
    assert len(grades(ev)) == 7
    after = _hashes(ev / "results")
    assert {k: v for k, v in after.items() if k in before} == before
    run_id = grades(ev)[0]["run"]["id"]
    res = cli("regrade", str(ev), "--run", run_id.split("-")[1][:8])
    assert "Graded 1 Run(s)" in res.out
    res = cli("regrade", str(ev), "--from-version", grades(ev)[-1]["grader"]["version"][:6])
    assert "Graded 3 Run(s)" in res.out
    assert cli("regrade", str(ev), "--since", "2999-01-01").out.startswith(
        "ev: grading 0 Run(s)")
    bad = cli("regrade", str(ev), "--since", "yesterday")
    assert (bad.code, bad.err) == (2, "Error: --since: 'yesterday' is not a date (use "
                                      "YYYY-MM-DD or an ISO date and time)\n")


def test_failed_runs_are_never_graded(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", configs={"default": "runner: ./bad.sh\nmodel: m1\n"},
                   files={"configs/bad.sh": "#!/bin/sh\nexit 1\n"})
    assert cli("run", str(ev), "-g").code == 1
    res = cli("grade", str(ev))
    assert res.code == 0
    assert "Skipped 2 failed Run(s)" in res.out
    assert not (ev / "results" / "grades").exists()


def test_invalid_grader_exits_2_before_grading(cli, evaldir: Path) -> None:
    assert cli("run", str(evaldir)).code == 0
    write(evaldir / "graders" / "default.yaml", "checks:\n  - checker: regex\n")
    res = cli("grade", str(evaldir))
    assert res.code == 2
    assert "graders/default.yaml:2:5: checks[0].pattern: " in res.err
    assert not (evaldir / "results" / "grades").exists()
    res = cli("grade", str(evaldir), "-g", "nope")
    assert (res.code, res.err) == (2, "Error: ev: no grader named 'nope' - available graders: "
                                      "default\n")


def test_grade_with_no_runs(cli, evaldir: Path) -> None:
    res = cli("grade", str(evaldir))
    assert res.code == 2
    assert res.err == f"Error: ev: no Runs in {evaldir}/results\n"


def test_an_answer_key_change_is_named_as_such(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: a\ngrading:\n  want: says\n",
                                           "two": "prompt: b\ngrading:\n  want: says\n"},
                   graders={"default": "checks:\n  - checker: contains\n"
                                       "    value: {task: want}\n"})
    assert cli("run", str(ev), "-g").code == 0
    write(ev / "tasks" / "one.yaml", "prompt: a\ngrading:\n  want: nope\n")
    res = cli("grade", str(ev))
    assert res.code == 1
    assert res.out.splitlines()[-3:] == [
        "Skipped 1 Run(s) already graded by this grader version",
        "1 Run(s) graded again: same grader version, but their Task's grading data (answer "
        "key) changed (the old Grades are kept)",
        "Against each Run's previous Grade: 1 pass->fail, 0 fail->pass"]
    assert "older grader versions" not in res.out


def test_an_interrupted_grade_says_how_many_it_graded(tmp_path: Path) -> None:
    import signal
    import subprocess
    import time

    from tests.helpers import SMEVALS

    slow = "#!/bin/sh\n[ \"$SMEVALS_TASK\" = t0 ] || sleep 20\nexit 0\n"
    ev = make_eval(tmp_path / "ev", tasks={f"t{i}": f"prompt: p{i}\n" for i in range(4)},
                   graders={"default": "checks:\n  - checker: ./slow.sh\n"},
                   files={"configs/echo.sh": "#!/bin/sh\necho hi\n", "graders/slow.sh": slow})
    subprocess.run([SMEVALS, "run", str(ev)], capture_output=True, check=True)
    proc = subprocess.Popen([SMEVALS, "grade", str(ev), "-j", "1"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    seen = [proc.stdout.readline() for _ in range(2)]     # the header, then t0's Grade
    assert seen[1].startswith("t0 / default / m1 ") and seen[1].endswith(" ... pass\n")
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "Graded 1 Run(s): 1 pass, 0 fail\n" in out
    assert err.endswith("Interrupted after grading 1 of 4 Run(s): the Grades above are kept; "
                        "`smevals grade` grades the rest.\n")


def test_a_suite_says_each_evals_own_counts_then_the_total(tmp_path: Path, cli) -> None:
    """`grade` of a Suite once printed only the Suite's total after the last Eval's Runs,
    read as that Eval's ("haiku: ... Skipped 108" where haiku has 30)."""
    suite = tmp_path / "suite"
    make_eval(suite / "big", name="big",
              tasks={f"t{i}": f"prompt: hello {i}\n" for i in range(3)})
    make_eval(suite / "small", name="small", tasks={"one": "prompt: hello one\n"})
    assert cli("run", str(suite), "-g").code == 0
    write(suite / "small" / "tasks" / "two.yaml", "prompt: hello two\n")
    assert cli("run", str(suite / "small"), "-t", "two").code == 0
    res = cli("grade", str(suite))
    assert res.code == 0, res.both
    lines = res.out.splitlines()
    assert lines[0].startswith("big: grading 0 Run(s) with grader version ")
    assert lines[1:3] == ["big: Graded 0 Run(s): 0 pass, 0 fail",
                          "big: Skipped 3 Run(s) already graded by this grader version"]
    assert lines[3].startswith("small: grading 1 Run(s) with grader version ")
    assert lines[4].startswith("two / default / m1 ") and lines[4].endswith(" ... pass")
    assert lines[5:] == ["small: Graded 1 Run(s): 1 pass, 0 fail",
                         "small: Skipped 1 Run(s) already graded by this grader version",
                         "Total over 2 Evals:",
                         "Graded 1 Run(s): 1 pass, 0 fail",
                         "Skipped 4 Run(s) already graded by this grader version"]
    dry = cli("grade", str(suite), "--dry-run").out.splitlines()
    assert dry == ["big: Would grade 0 Run(s); judge calls: 0 (0 from the judge cache, 0 to "
                   "make)",
                   "big: Skipped 3 Run(s) already graded by this grader version",
                   "small: Would grade 0 Run(s); judge calls: 0 (0 from the judge cache, 0 to "
                   "make)",
                   "small: Skipped 2 Run(s) already graded by this grader version",
                   "Total over 2 Evals:",
                   "Would grade 0 Run(s); judge calls: 0 (0 from the judge cache, 0 to make)",
                   "Skipped 5 Run(s) already graded by this grader version"]
