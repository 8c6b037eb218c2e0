"""A revision's programs come from that revision only. For a checker named through `../`,
beside the grader, by an absolute path inside the repository and found on PATH inside the
repository (and for a runner named through `../`): commit A, edit the program and grade
(or run) at commit B, then plant a third program in the working tree. `diff A B` must show
the versions `grade` printed at A and at B, and `report --rev` each of them, whatever the
working tree holds."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.helpers import git, run_cli, write

PASS = "#!/bin/sh\nexit 0\n"
FAIL = "#!/bin/sh\nexit 1\n"
PLANTED = "#!/bin/sh\n# planted in the working tree\nexit 0\n"


def smevals(repo: Path, *args: str) -> tuple[int, str, str]:
    path = f"{repo / 'tools'}{os.pathsep}{os.environ['PATH']}"
    res = run_cli(*args, cwd=repo, env={"PATH": path})
    return res.code, res.out, res.err


def version(repo: Path) -> str:
    code, out, err = smevals(repo, "grade", "ev")
    assert code in (0, 1), err
    (found,) = re.findall(r"with grader version (\w+)", out)
    found_version: str = found
    return found_version


def setup(repo: Path, program: Path, spec: str) -> None:
    write(repo / "ev" / "eval.yaml", "name: ev\n")
    write(repo / "ev" / "tasks" / "one.yaml", "prompt: hi\n")
    write(repo / "ev" / "tasks" / "two.yaml", "prompt: ho\n")
    write(repo / "ev" / "configs" / "default.yaml", "runner: ../bin/run.sh\nmodel: m\n")
    write(repo / "ev" / "bin" / "run.sh", "#!/bin/sh\necho \"$SMEVALS_PROMPT\"\n",
          executable=True)
    write(repo / "ev" / "graders" / "default.yaml", f"checks:\n  - checker: {spec}\n")
    write(program, PASS, executable=True)


@pytest.mark.parametrize("where", ["through ..", "beside the grader", "absolute path",
                                   "on PATH"])
def test_each_side_grades_with_its_own_checker(tmp_path: Path, where: str) -> None:
    repo = tmp_path / "repo"
    program = {"through ..": repo / "ev" / "checkers" / "check",
               "beside the grader": repo / "ev" / "graders" / "check",
               "absolute path": repo / "tools" / "check",
               "on PATH": repo / "tools" / "check-on-path"}[where]
    spec = {"through ..": "../checkers/check", "beside the grader": "./check",
            "absolute path": str(program), "on PATH": "check-on-path"}[where]
    setup(repo, program, spec)
    git(repo, "init", "-q")
    assert smevals(repo, "run", "ev", "-g")[0] == 0
    version_a = version(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a")
    program.write_text(FAIL)
    version_b = version(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "b")
    program.write_text(PLANTED)                  # neither side may use this one
    planted = version(repo)
    assert len({version_a, version_b, planted}) == 3
    for revs, (va, vb), direction in (
            (("HEAD~1", "HEAD"), (version_a, version_b), "pass->fail"),
            (("HEAD", "HEAD~1"), (version_b, version_a), "fail->pass")):
        code, out, err = smevals(repo, "diff", *revs, "ev", "--format", "json",
                                 "--fail-on-regression=flip")
        (ev,) = json.loads(out)["evals"]
        assert (ev["version_a"], ev["version_b"]) == (va, vb)
        assert [f["direction"] for f in ev["flips"]] == [direction, direction]
        assert code == (1 if direction == "pass->fail" else 0), err
    for rev, want in (("HEAD~1", version_a), ("HEAD", version_b)):
        code, out, err = smevals(repo, "report", "ev", "--rev", rev, "--format", "json")
        assert json.loads(out)["evals"][0]["grader_version"] == want, err


def test_each_side_tells_stale_runs_by_its_own_runner(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    setup(repo, repo / "ev" / "graders" / "check", "./check")
    git(repo, "init", "-q")
    assert smevals(repo, "run", "ev", "-g")[0] == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a")
    runner = repo / "ev" / "bin" / "run.sh"
    runner.write_text(runner.read_text() + "# v2\n")
    assert smevals(repo, "run", "ev", "-n", "1", "-g")[0] == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "b")
    runner.write_text(runner.read_text() + "# planted\n")
    for revs, stale_a, stale_b in ((("HEAD~1", "HEAD"), 0, 2), (("HEAD", "HEAD~1"), 2, 0)):
        code, out, err = smevals(repo, "diff", *revs, "ev", "--format", "json")
        (ev,) = json.loads(out)["evals"]
        assert code == 0, err
        assert (ev["stale"]["a"], ev["stale"]["b"]) == (
            {"left_out": stale_a, "reasons": {"runner_changed": 2} if stale_a else {}},
            {"left_out": stale_b, "reasons": {"runner_changed": 2} if stale_b else {}})
        groups = ev["groups"]
        assert [(g["a"]["runs"], g["b"]["runs"]) for g in groups] == [(2, 2)]


def test_a_program_outside_the_repository_is_used_as_it_is(tmp_path: Path) -> None:
    repo, outside = tmp_path / "repo", tmp_path / "outside" / "check"
    setup(repo, outside, "../../../outside/check")
    git(repo, "init", "-q")
    assert smevals(repo, "run", "ev", "-g")[0] == 0
    current = version(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a")
    code, out, err = smevals(repo, "report", "ev", "--rev", "HEAD", "--format", "json")
    assert (code, json.loads(out)["evals"][0]["grader_version"]) == (0, current), err
