"""The History page's diff pages reuse what one diff read for the next (issue 41 item 4):
an Eval is extracted once per state of its folder and of the files it uses outside it, not
twice per commit, and each page is the one a diff of its own gives; a commit that changes
only a runner outside the Eval is read afresh, never from an older state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smevals.errors import SmevalsError
from smevals.history.doc import HistoryDoc
from smevals.sides import read
from smevals.site.history import HistorySpec, commit_diff, commit_diffs, eval_history
from smevals.store import scope
from tests.helpers import make_eval, run_cli
from tests.report.builder import commit, git, write
from tests.web.historyrepo import make_history


@pytest.fixture
def extractions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The commits at which an Eval was extracted (`spec.committed.eval_at`)."""
    seen: list[str] = []
    real = read.eval_at

    def counted(folder: Path, revision: Any, *args: Any) -> Any:
        seen.append(revision.commit)
        return real(folder, revision, *args)

    monkeypatch.setattr(read, "eval_at", counted)
    return seen


def states(repo: Path, prefix: str, shas: list[str]) -> int:
    """How many distinct states the Eval folder has at `shas` (its entries, results left
    out), as git lists them."""
    found = set()
    for sha in shas:
        listing = git(repo, "ls-tree", sha, "--", f"{prefix}/").splitlines()
        found.add(tuple(line for line in listing if not line.endswith(f"{prefix}/results")))
    return len(found)


def pages(folder: Path, doc: HistoryDoc, spec: HistorySpec) -> dict[str, Any]:
    with scope.command():
        return commit_diffs("qa", folder, spec, doc)


def test_each_state_of_the_eval_is_extracted_once(tmp_path: Path, extractions: list[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    hist = make_history(tmp_path / "repo")
    monkeypatch.chdir(hist.repo)
    monkeypatch.setenv("SMEVALS_CACHE_DIR", str(tmp_path / "cache"))
    spec = HistorySpec(10)
    with scope.command():
        doc = eval_history(Path("qa"), spec)
    extractions.clear()
    made = pages(Path("qa"), doc, spec)
    read_at = hist.shas[:-1] + [hist.shas[-1]]               # each commit and its parent
    assert sorted(made) == sorted(hist.shas[:-1])
    assert len(extractions) == states(hist.repo, "qa", read_at) == 4
    assert len(extractions) < 2 * len(made)                   # was: two per commit
    for commit_doc in doc["commits"][:-1]:                    # the same page without reuse
        with scope.command():
            alone = commit_diff("qa", Path("qa"), spec, commit_doc)
        assert made[commit_doc["sha"]] == alone


def test_a_runner_outside_the_eval_is_read_as_committed(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        extractions: list[str]) -> None:
    repo = tmp_path / "repo"
    make_eval(repo / "qa", name="qa", configs={"default": "runner: ../../shared/r.sh\n"
                                                          "model: m1\n"}, files={})
    write(repo / "shared" / "r.sh", '#!/bin/sh\necho "it says yes"\n', 0o755)
    git(repo, "init", "-q", "-b", "main")
    assert run_cli("run", "qa", "-g", cwd=repo).code == 0
    commit(repo, "results")
    write(repo / "shared" / "r.sh", '#!/bin/sh\necho "it says no"\n', 0o755)
    commit(repo, "the shared runner edited")
    assert run_cli("run", "qa", "-g", cwd=repo).code == 0
    commit(repo, "new results")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("SMEVALS_CACHE_DIR", str(tmp_path / "cache"))
    spec = HistorySpec(10)
    with scope.command():
        doc = eval_history(Path("qa"), spec)
    assert [c["subject"] for c in doc["commits"]] == ["new results", "the shared runner edited",
                                                     "results"]
    extractions.clear()
    made = pages(Path("qa"), doc, spec)
    assert len(extractions) == 2            # the runner differs: a second state, read afresh
    edited = made[doc["commits"][1]["sha"]]["diff"]
    assert edited["stale"]["b"] == {"left_out": 2, "reasons": {"runner_changed": 2}}
    for commit_doc in doc["commits"][:-1]:
        with scope.command():
            assert made[commit_doc["sha"]] == commit_diff("qa", Path("qa"), spec, commit_doc)


def test_a_reuse_folder_is_removed_when_closed() -> None:
    from smevals.sides.reuse import Reuse

    with Reuse() as reuse:
        folder = reuse.folder
        assert folder.is_dir()
    assert not folder.exists()
    with Reuse() as reuse, pytest.raises(SmevalsError):
        reuse.open(Path("/nonexistent/qa"), "HEAD", None)
