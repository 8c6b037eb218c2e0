"""The seven commits of issue 37, made by the CLI on a copy of the json-extraction suite
(offline: its replay runner answers for steady-7b and mumble-1):

| commit | what changed |
| --- | --- |
| HEAD~6 | the Eval, no results |
| HEAD~5 | steady-7b, one Run per Task |
| HEAD~4 | a new model: mumble-1, one Run per Task |
| HEAD~3 | more samples: three Runs per Task and model |
| HEAD~2 | the grader's scoring: `method: mean` -> `min`, then `smevals grade` (the same Runs) |
| HEAD~1 | the Task `order` deleted |
| HEAD   | a README edit inside the Eval |
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

import smevals
from tests.helpers import run_cli
from tests.helpers.qa import commit, git

if TYPE_CHECKING:
    import pytest

SUITE = Path(smevals.__file__).parent / "suites" / "json-extraction"
SUBJECTS = ("the Eval", "steady-7b", "mumble-1, a new model", "three samples each",
            "scoring: mean -> min", "task order deleted", "README edited")
EVAL = "json-extraction"


def seven_commits(repo: Path, env: dict[str, str]) -> Path:
    """Make the seven commits in `repo`; the Eval's folder."""
    git(repo, "init", "-q", "-b", "main")
    ev = repo / EVAL
    shutil.copytree(SUITE, ev)
    commit(repo, SUBJECTS[0])
    for models, n, subject in ((["steady-7b"], "1", SUBJECTS[1]),
                               (["mumble-1"], "1", SUBJECTS[2]),
                               (["steady-7b", "mumble-1"], "3", SUBJECTS[3])):
        flags = [f for m in models for f in ("-m", m)]
        made = run_cli("run", str(ev), *flags, "-n", n, "-g", env=env)
        assert made.code in (0, 1), made.both           # 1: some Grades fail
        commit(repo, subject)
    grader = ev / "graders" / "default.yaml"
    text = grader.read_text()
    assert "  method: mean" in text
    grader.write_text(text.replace("  method: mean", "  method: min"))
    graded = run_cli("grade", str(ev), env=env)
    assert graded.code in (0, 1), graded.both
    commit(repo, SUBJECTS[4])
    (ev / "tasks" / "order.yaml").unlink()
    commit(repo, SUBJECTS[5])
    with (ev / "README.md").open("a") as readme:
        readme.write("\nRead the grader before the figures.\n")
    commit(repo, SUBJECTS[6])
    return ev


def seven_repo(factory: pytest.TempPathFactory) -> Path:
    """A new repository holding the seven commits (its cache folder beside it)."""
    repo = factory.mktemp("seven") / "repo"
    repo.mkdir()
    seven_commits(repo, {"SMEVALS_CACHE_DIR": str(repo.parent / "cache")})
    return repo
