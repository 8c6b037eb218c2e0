"""`diff` reads each side's Eval with one `git archive` (not one per folder and file), and
asks git for the top of the work tree once per command."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import make_eval, run_cli, write
from tests.helpers.store import commit_all


def test_diff_of_two_commits_reads_each_eval_with_one_archive(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    ev = make_eval(repo / "ev")
    write(ev / "README.md", "# ev\n")
    assert run_cli("run", "ev", "-g", cwd=repo).code == 0
    commit_all(repo, "one")
    write(ev / "tasks" / "one.yaml", "prompt: hello again\n")
    assert run_cli("run", "ev", "-g", cwd=repo).code == 0
    commit_all(repo, "two")
    asked: list[list[str]] = []
    real = subprocess.run

    def spy(argv: list[str], *args: Any, **kwargs: Any) -> Any:
        if argv[:1] == ["git"]:
            asked.append(argv[3:])
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", spy)         # gitcat.git runs git through it
    res = run_cli("diff", "HEAD~1", "HEAD", "ev", cwd=repo)
    assert res.code == 0, res.both
    archives = [a for a in asked if a[0] == "archive"]
    entries = sorted(f":(literal)ev/{p.name}" for p in ev.iterdir() if p.name != "results")
    assert [sorted(a[a.index("--") + 1:]) for a in archives] == [entries, entries]
    # once per folder asked about (the Eval's, its store's), not once per side and reader
    assert sum(a[:2] == ["rev-parse", "--show-toplevel"] for a in asked) == 2
    assert not [a for a in asked if a[:2] == ["cat-file", "blob"]]
