"""The cache of parsed authoring files (evaldef/defcache.py): used while files are unchanged,
never stale after a task or config is edited, added or deleted, safe when damaged."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import make_eval, write
from tests.helpers.defcache import cached_files, same_as_uncached, settle, short_racy_window


@pytest.fixture(autouse=True)
def _short_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    short_racy_window(monkeypatch)


def test_dry_run_sees_every_edit_made_after_the_definitions_were_cached(cli, tmp_path: Path):
    ev = make_eval(tmp_path / "ev", tasks={"a": "prompt: p\n", "b": "prompt: q\n"})
    assert cli("run", "ev", cwd=tmp_path).code == 0
    settle()
    assert same_as_uncached(cli, tmp_path, "run", "ev", "--dry-run") == (
        "ev: 2 Run(s) to make with config 'default' (2 task/model pair(s), 2 with earlier "
        "Runs of the same inputs)\n"
        "  a / default / m1: 1 Run(s) exist, would run 1\n"
        "  b / default / m1: 1 Run(s) exist, would run 1\n")
    assert len(cached_files(tmp_path)) == 1
    write(ev / "tasks" / "a.yaml", "prompt: x\n")                # same size, same inode
    write(ev / "tasks" / "c.yaml", "prompt: r\n")
    assert same_as_uncached(cli, tmp_path, "run", "ev", "--dry-run") == (
        "ev: 3 Run(s) to make with config 'default' (3 task/model pair(s), 1 with earlier "
        "Runs of the same inputs; 1 stale Run(s) not counted: task edited)\n"
        "  a / default / m1: 0 current Run(s) + 1 stale (task edited), would run 1\n"
        "  b / default / m1: 1 Run(s) exist, would run 1\n"
        "  c / default / m1: 0 Run(s) exist, would run 1\n")
    (ev / "tasks" / "b.yaml").unlink()
    write(ev / "configs" / "default.yaml", "runner: ./echo.sh\nmodel: m2\n")
    assert same_as_uncached(cli, tmp_path, "run", "ev", "--dry-run") == (
        "ev: 2 Run(s) to make with config 'default' (2 task/model pair(s), 0 with earlier "
        "Runs of the same inputs)\n"
        "  a / default / m2: 0 Run(s) exist, would run 1\n"
        "  c / default / m2: 0 Run(s) exist, would run 1\n")


def test_report_sees_an_edited_task_and_grader(cli, tmp_path: Path):
    ev = make_eval(tmp_path / "ev")
    assert cli("run", "ev", "-g", cwd=tmp_path).code == 0
    settle()
    first = same_as_uncached(cli, tmp_path, "report", "ev")
    assert "Stale" not in first and "- Graded: 2 runs (0 failed, 0 ungraded)\n" in first
    assert len(cached_files(tmp_path)) == 1
    write(ev / "tasks" / "one.yaml", "prompt: hello 1\n")         # same size, same inode
    edited = same_as_uncached(cli, tmp_path, "report", "ev")
    assert "- Stale: 1 run(s) left out (task edited: 1; --include-stale to include them)\n" \
        in edited
    write(ev / "graders" / "default.yaml", "checks:\n  - checker: contains\n    value: sayz\n")
    regraded = same_as_uncached(cli, tmp_path, "report", "ev")
    assert regraded.splitlines()[2] != edited.splitlines()[2]     # the grader's version
    assert "- Graded: 0 runs (0 failed, 1 ungraded)\n" in regraded


def test_an_error_in_a_cached_file_is_reported_as_without_the_cache(cli, tmp_path: Path):
    ev = make_eval(tmp_path / "ev")
    settle()
    assert cli("run", "ev", "--dry-run", cwd=tmp_path).code == 0
    write(ev / "tasks" / "two.yaml", "prompt: [hello\n")
    res = cli("run", "ev", "--dry-run", cwd=tmp_path)
    assert res.code == 2 and "ev/tasks/two.yaml:2:1: " in res.err
    assert res.err == cli("run", "ev", "--dry-run", cwd=tmp_path,
                          env={"SMEVALS_NO_CACHE": "1"}).err


def test_a_damaged_cache_is_ignored_and_written_again(cli, tmp_path: Path):
    make_eval(tmp_path / "ev")
    settle()
    want = cli("run", "ev", "--dry-run", cwd=tmp_path).out
    [path] = cached_files(tmp_path)
    good = path.read_bytes()
    for damaged in (good[:len(good) // 2], b"\x00garbage", b""):
        path.write_bytes(damaged)
        assert cli("run", "ev", "--dry-run", cwd=tmp_path).out == want
        assert path.read_bytes() == good
