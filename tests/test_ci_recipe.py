"""The GitHub Actions recipe of docs/ci.md works: its shell steps run here, in order, in a
clone of a local bare "origin", first as a push to main, then as a pull request that
tightens an answer key (the install step and the `uses:` actions are what GitHub provides;
`gh` is a stand-in that records the comment it would post)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import SMEVALS, write

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "docs" / "ci" / "github-actions.yml"
EXPRESSION = re.compile(r"^\$\{\{ (.+) \}\}$")


def load() -> dict[str, Any]:
    return yaml.safe_load(WORKFLOW.read_text())


def steps() -> list[dict[str, Any]]:
    return load()["jobs"]["evals"]["steps"]


def test_the_workflow_is_triggered_by_pushes_to_main_and_pull_requests() -> None:
    doc = load()
    triggers = doc.get("on", doc.get(True))          # YAML 1.1 reads a bare `on` as true
    assert triggers == {"push": {"branches": ["main"]}, "pull_request": None}
    assert doc["permissions"] == {"contents": "write", "pull-requests": "write"}
    checkout = steps()[0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"]["fetch-depth"] == 0
    install = next(s["run"] for s in steps() if s.get("name") == "Install smevals")
    assert "pip install smevals" in install


def git(cwd: Path, *args: str) -> str:
    """git as the developer (the workflow's commits name their own author)."""
    return subprocess.run(["git", "-c", "user.name=Dev", "-c", "user.email=dev@example.com",
                           *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def run_steps(work: Path, env: dict[str, str], event: str,
              context: dict[str, str]) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every `run:` step for `event` but the install, as GitHub runs it (bash -e), with the
    step's `${{ ... }}` environment taken from `context`. Steps after a failure run only
    when their `if:` says always()."""
    done: dict[str, subprocess.CompletedProcess[str]] = {}
    failed = False
    for step in steps():
        if "run" not in step or step["name"] == "Install smevals":
            continue
        cond = step.get("if", "")
        if "pull_request" in cond and event != "pull_request":
            continue
        if failed and "always()" not in cond:
            continue
        assert "${{" not in step["run"], step["name"]
        step_env = {k: context[EXPRESSION.match(v)[1]] if EXPRESSION.match(v) else v
                    for k, v in step.get("env", {}).items()}
        proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=work,
                              env={**env, **step_env}, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=300)
        done[step["name"]] = proc
        failed = failed or proc.returncode != 0
    return done


def test_the_workflow_runs_grades_commits_and_gates_a_pull_request(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    write(bin_dir / "gh", '#!/bin/sh\nprintf "%s\\n" "$*" >> "$GH_LOG"\n', executable=True)
    env = {**os.environ, "PATH": f"{bin_dir}:{Path(SMEVALS).parent}:{os.environ['PATH']}",
           "HOME": str(tmp_path), "GH_LOG": str(tmp_path / "gh.log"),
           "GIT_CONFIG_NOSYSTEM": "1"}
    origin, work = tmp_path / "origin.git", tmp_path / "work"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(work)], check=True, env=env,
                   capture_output=True)
    made = subprocess.run([SMEVALS, "init", "--example", "json-extraction", "evals/jx"],
                          cwd=work, env=env, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    for args in (["checkout", "-q", "-b", "main"], ["add", "-A"],
                 ["commit", "-q", "-m", "an eval"], ["push", "-q", "origin", "main"]):
        git(work, *args)

    # a push to main: Runs and Grades are made and committed to main
    on_main = run_steps(work, env, "push", {"github.head_ref || github.ref_name": "main",
                                            "secrets.OPENAI_API_KEY": ""})
    assert {k: p.returncode for k, p in on_main.items()} == {"Run and grade": 0,
                                                             "Commit results": 0}
    assert "15 ok, 0 failed" in on_main["Run and grade"].stdout + on_main["Run and grade"].stderr
    assert git(origin, "log", "-1", "--format=%an: %s", "main") == "smevals CI: smevals results\n"
    assert len(git(origin, "ls-tree", "-r", "--name-only", "main", "evals/jx/results/runs")
               .split("\n")) > 15

    # a pull request that tightens an answer key: regraded, committed, diffed, gated
    git(work, "checkout", "-q", "-b", "tighten")
    contact = work / "evals" / "jx" / "tasks" / "contact.yaml"
    contact.write_text(contact.read_text().replace("field_path: email", "field_path: name")
                       .replace("amara.okafor@", "Dr. Amara Okafor#"))
    git(work, "commit", "-q", "-am", "the contact's name keeps its title")
    context = {"github.head_ref || github.ref_name": "tighten", "secrets.OPENAI_API_KEY": "",
               "github.token": "token", "github.event.pull_request.number": "7"}
    on_pr = run_steps(work, env, "pull_request", context)
    assert {k: p.returncode for k, p in on_pr.items()} == {
        "Run and grade": 0, "Commit results": 0, "Diff against main": 1,
        "Comment the diff": 0}
    graded = on_pr["Run and grade"].stdout
    assert graded.count("(no current Grade) ... grade: ") == 3     # regraded by run -g
    assert "Graded 0 Run(s)" in graded
    assert git(origin, "log", "-1", "--format=%s", "tighten") == "smevals results\n"
    assert "went pass -> fail" in on_pr["Diff against main"].stderr
    body = (work / "diff.md").read_text()
    assert body.startswith("# Diff: origin/main -> working tree\n")
    assert "- Flips: 1 pass -> fail, 0 fail -> pass" in body
    assert (tmp_path / "gh.log").read_text() == "pr comment 7 --body-file diff.md\n"
