"""The GitHub Actions recipe of docs/ci.md works: its shell steps run here, in order, in a
clone of a local bare "origin", first as a push to main, then as a pull request that
tightens an answer key (the `uses:` actions are what GitHub provides; `gh` is a stand-in
that records the comment it would post). The install step runs too, as the recipe says
(`SMEVALS_PACKAGE` set to a wheel built from this checkout), into a fresh virtual
environment, offline: every later step runs the `smevals` it installed, so the recipe
cannot install another project of the same name."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

import smevals
from tests import helpers
from tests.helpers import SMEVALS, write

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "docs" / "ci" / "github-actions.yml"
EXPRESSION = re.compile(r"^\$\{\{ (.+) \}\}$")
LITERAL = re.compile(r"^'([^']*)'$")


def load() -> dict[str | bool, Any]:
    out: dict[str | bool, Any] = yaml.safe_load(WORKFLOW.read_text())
    return out


def steps() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = load()["jobs"]["evals"]["steps"]
    return out


def test_the_workflow_is_triggered_by_pushes_to_main_and_pull_requests() -> None:
    doc = load()
    triggers = doc.get("on", doc.get(True))          # YAML 1.1 reads a bare `on` as true
    assert triggers == {"push": {"branches": ["main"]}, "pull_request": None}
    assert doc["permissions"] == {"contents": "write", "pull-requests": "write"}
    checkout = steps()[0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"]["fetch-depth"] == 0
    install = next(s for s in steps() if s.get("name") == "Install smevals")
    assert install["run"] == 'python -m pip install "$SMEVALS_PACKAGE"'
    # by default a release of this project by its git URL, at the tag of the current version
    expression = EXPRESSION.match(install["env"]["SMEVALS_PACKAGE"])
    assert expression is not None
    default = evaluate(expression[1],
                       {"vars.SMEVALS_PACKAGE": ""})
    assert default == f"smevals @ git+https://github.com/OWNER/REPO@v{smevals.__version__}"


def evaluate(expression: str, context: dict[str, str]) -> str:
    """A `${{ a || 'b' }}` expression: the first operand that is not empty, as GitHub does
    (every name must be in `context`)."""
    for operand in expression.split(" || "):
        literal = LITERAL.match(operand)
        value = literal[1] if literal else context[operand]
        if value:
            return value
    return ""


DEV = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
       "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}


def git(cwd: Path, *args: str) -> str:
    """git as the developer (the workflow's commits name their own author)."""
    return helpers.git(cwd, *args, env=DEV)


def run_steps(work: Path, env: dict[str, str], event: str, context: dict[str, str],
              skip: tuple[str, ...] = ()) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every `run:` step for `event` (but those named in `skip`), as GitHub runs it (bash -e),
    with the step's `${{ ... }}` environment taken from `context`. Steps after a failure run
    only when their `if:` says always()."""
    done: dict[str, subprocess.CompletedProcess[str]] = {}
    failed = False
    for step in steps():
        if "run" not in step or step["name"] in skip:
            continue
        cond = step.get("if", "")
        if "pull_request" in cond and event != "pull_request":
            continue
        if failed and "always()" not in cond:
            continue
        assert "${{" not in step["run"], step["name"]
        step_env = {k: evaluate(m[1], context) if (m := EXPRESSION.match(v)) else v
                    for k, v in step.get("env", {}).items()}
        proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=work,
                              env={**env, **step_env}, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=300)
        done[step["name"]] = proc
        failed = failed or proc.returncode != 0
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of this checkout, as `pip wheel --no-deps -w dist .` makes it in a clone."""
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--quiet", "-w", str(dist), str(ROOT)], check=True, capture_output=True)
    (found,) = dist.glob("smevals-*.whl")
    assert found.name == f"smevals-{smevals.__version__}-py3-none-any.whl"
    return found


def fresh_venv(root: Path) -> Path:
    """A new virtual environment with smevals' dependencies (and pip) but not smevals: the
    packages of the test's own environment, linked one by one but for smevals' own, are
    put on its path, so that installing needs no network."""
    venv, deps = root / "venv", root / "deps"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    deps.mkdir()
    for entry in Path(sysconfig.get_path("purelib")).iterdir():
        if not entry.name.startswith(("smevals", "__editable__")) and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    site = subprocess.run([str(venv / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "deps.pth").write_text(f"{deps}\n")
    return venv


def test_the_workflow_runs_grades_commits_and_gates_a_pull_request(tmp_path: Path,
                                                                  wheel: Path) -> None:
    bin_dir, venv = tmp_path / "bin", fresh_venv(tmp_path)
    write(bin_dir / "gh", '#!/bin/sh\nprintf "%s\\n" "$*" >> "$GH_LOG"\n', executable=True)
    # no folder that already holds an `smevals` (this test's venv, another activated one)
    path = [p for p in os.environ["PATH"].split(os.pathsep)
            if p and not os.path.exists(os.path.join(p, "smevals"))]
    env = {**os.environ, "PATH": os.pathsep.join([str(bin_dir), str(venv / "bin"), *path]),
           "HOME": str(tmp_path), "GH_LOG": str(tmp_path / "gh.log"),
           "GIT_CONFIG_NOSYSTEM": "1", "PIP_NO_INDEX": "1",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"):
        env.pop(name, None)
    assert shutil.which("smevals", path=env["PATH"]) is None      # not installed yet
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
    package = {"vars.SMEVALS_PACKAGE": str(wheel)}
    on_main = run_steps(work, env, "push", {"github.head_ref": "", "github.ref_name": "main",
                                            "secrets.OPENAI_API_KEY": "", **package})
    assert {k: p.returncode for k, p in on_main.items()} == {
        "Install smevals": 0, "Run and grade": 0, "Commit results": 0}, on_main
    assert shutil.which("smevals", path=env["PATH"]) == str(venv / "bin" / "smevals")
    where = subprocess.run(["python", "-c", "import smevals; print(smevals.__file__)"],
                           env=env, cwd=work, capture_output=True, text=True).stdout
    assert where.startswith(str(venv)), where
    assert "15 ok, 0 failed" in on_main["Run and grade"].stdout + on_main["Run and grade"].stderr
    assert git(origin, "log", "-1", "--format=%an: %s", "main") == "smevals CI: smevals results\n"
    assert len(git(origin, "ls-tree", "-r", "--name-only", "main", "evals/jx/results/runs")
               .split("\n")) > 15

    # a pull request that tightens an answer key: regraded, committed, diffed, gated
    git(work, "checkout", "-q", "-b", "tighten")
    contact = work / "evals" / "jx" / "tasks" / "contact.yaml"
    contact.write_text(contact.read_text().replace("field_path: email", "field_path: name")
                       .replace("field_value: amara.okafor@fernwood.example",
                                 "field_value: Dr. Amara Okafor"))  # the answer key only
    git(work, "commit", "-q", "-am", "the contact's name keeps its title")
    context = {"github.head_ref": "tighten", "github.ref_name": "7/merge",
               "secrets.OPENAI_API_KEY": "",
               "github.token": "token", "github.event.pull_request.number": "7", **package}
    # (installed by the first job already: installing the same wheel again proves nothing)
    on_pr = run_steps(work, env, "pull_request", context, skip=("Install smevals",))
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


def test_the_wheel_ships_the_suites_with_schema_comments_that_resolve(tmp_path: Path,
                                                                      wheel: Path) -> None:
    """What `init --example` copies from an installed smevals: the suites, as files, whose
    `$schema` comments name the package's own schemas."""
    import zipfile

    from tests.helpers.schemas import resolve_all

    with zipfile.ZipFile(wheel) as whl:
        whl.extractall(tmp_path)
    suites = tmp_path / "smevals" / "suites"
    assert not suites.is_symlink()
    assert resolve_all(suites) == resolve_all(ROOT / "suites")
