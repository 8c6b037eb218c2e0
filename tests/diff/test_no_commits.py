"""`diff` and `report --rev` in a git repository without commits say so (exit 2), instead of
git's "unknown revision 'HEAD'"."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers import make_eval, run_cli


def test_a_repository_without_commits(tmp_path: Path) -> None:
    make_eval(tmp_path / "ev")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert run_cli("run", "ev", "-g", cwd=tmp_path).code == 0
    said = (f"Error: the git repository {tmp_path.resolve()} has no commits yet, so there is "
            "no revision '{}' to read: commit the Eval and its results first (git add, git "
            "commit)\n")
    for args, rev in ((("diff", "ev"), "HEAD"), (("diff", "HEAD~1", "ev"), "HEAD~1"),
                      (("report", "ev", "--rev", "main"), "main")):
        res = run_cli(*args, cwd=tmp_path)
        assert (res.code, res.out, res.err) == (2, "", said.format(rev)), args
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "first"], check=True)
    res = run_cli("diff", "nope", "ev", cwd=tmp_path)
    assert (res.code, res.err) == (2, "Error: unknown revision 'nope'\n")
    subprocess.run(["git", "-C", str(tmp_path), "checkout", "-q", "--orphan", "fresh"],
                   check=True)
    res = run_cli("diff", "ev", cwd=tmp_path)
    assert (res.code, res.err) == (2, f"Error: the current branch of {tmp_path.resolve()} has "
                                   "no commits yet, so there is no revision 'HEAD' to read: "
                                   "commit the Eval and its results first (git add, git "
                                   "commit)\n")
