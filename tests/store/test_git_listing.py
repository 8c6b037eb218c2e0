"""Revisions read one after another in one process: each lists only the sub-folders of
`runs/` (per Task) and `grades/` (per grader and Task) whose git tree changed since the
revision read before, and reads exactly what a first read of it would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smevals.store.read import Store
from tests.helpers import reset_process_state
from tests.helpers.qa import git, history


def read(root: Path, rev: str) -> tuple[Any, ...]:
    store = Store(root, rev)
    runs, grades = store.runs(brief=True), store.grades(brief=True)
    return ([(o.rel, o.record) for o in runs], [(o.rel, o.record) for o in grades],
            sorted(store.broken))


def test_each_revision_reads_as_on_its_own(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMEVALS_NO_CACHE", "1")
    repo = tmp_path / "repo"
    repo.mkdir()
    history(repo)                       # HEAD~2 state 1, HEAD~1 regraded, HEAD new Runs
    root = repo / "qa" / "results"
    record = next(root.glob("runs/alpha/default/small/*/run.json"))
    record.chmod(0o644)
    record.write_bytes(record.read_bytes().replace(b'"sample"', b'"sample" ', 1))
    (root / "runs" / "epsilon").rename(root / "runs" / "zeta")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "damaged, a Task folder renamed")
    revisions = ["HEAD~3", "HEAD~2", "HEAD~1", "HEAD"]
    reset_process_state()
    in_turn = [read(root, rev) for rev in revisions]
    alone = []
    for rev in revisions:
        reset_process_state()
        alone.append(read(root, rev))
    assert in_turn == alone
    assert len(alone[-1][2]) == 2                   # the damaged Run and the renamed one
    assert [len(runs) for runs, _grades, _broken in alone] == [21, 21, 24, 22]
