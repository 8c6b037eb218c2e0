"""A git history of the qa Eval for the History page: tests/helpers/qa.py's four commits
(the Eval alone; state 1; the grader edited and every Run regraded; new Runs), then a commit
whose results are damaged (a Grade record edited by hand), then one that repairs it and adds
a Run of "huge", then one that edits the runner (every Run made before is stale) and
runs one Task again with it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from smevals.evaldef.load import load_eval
from tests.helpers.qa import RUNNER, Builder, commit, git, history, write

SUBJECTS = ["state 6: runner edited, small runs alpha again",
            "state 5: repaired; huge tries beta", "state 4: a Grade edited by hand",
            "state 3: new runs", "state 2: grader edited, regraded", "state 1", "eval only"]
RUNNER_EDITED = 0       # the index in SUBJECTS (newest first) of the commit that edits the runner
DAMAGED = 2             # the damaged commit
TASK_ADDED = 3
GRADER_EDITED = 4       # the commit where the grader version changed


@dataclass
class HistoryRepo:
    repo: Path
    builder: Builder
    shas: list[str]         # newest first, as SUBJECTS

    @property
    def qa(self) -> Path:
        return self.repo / "qa"

    def sha(self, subject: str) -> str:
        return self.shas[SUBJECTS.index(subject)]


def damage(qa: Path) -> tuple[Path, bytes]:
    """Edit one Grade record of "large" by hand: it no longer hashes to its id."""
    record = sorted((qa / "results" / "grades").rglob("large/*/grade.json"))[-1]
    before = record.read_bytes()
    assert b'"duration_seconds": 0.01' in before
    record.chmod(0o644)
    record.write_bytes(before.replace(b'"duration_seconds": 0.01', b'"duration_seconds": 0.02'))
    return record, before


def make_history(repo: Path) -> HistoryRepo:
    repo.mkdir(parents=True, exist_ok=True)
    b = history(repo)
    record, before = damage(repo / "qa")
    commit(repo, SUBJECTS[2])
    record.write_bytes(before)
    b.run("huge-beta", "beta", "huge")
    b.grade("huge-beta", "fail", 0.0)
    commit(repo, SUBJECTS[1])
    write(repo / "qa" / "configs" / "run.sh", RUNNER + "# the second runner\n", 0o755)
    b.ev = load_eval(repo / "qa")
    b.run("small-alpha-again", "alpha", "small")
    b.grade("small-alpha-again", "pass", 0.9)
    commit(repo, SUBJECTS[0])
    shas = git(repo, "log", "--format=%H").split()
    assert len(shas) == len(SUBJECTS)
    return HistoryRepo(repo, b, shas)
