"""What a hostile runner leaves in its workspace (issue 24, items 1-3): a symlink, a hard
link, a FIFO or a socket where smevals writes or reads is never followed, written through,
chmod-ed or opened; a store folder that is a symlink is never written through.

Every command runs as a real process with a timeout, so a regression that blocks on a FIFO
fails the test instead of hanging it.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from smevals.spec.load import display_path as shown
from tests.conftest import make_eval

QUICK = 60                      # seconds: a blocked open would never finish


def eval_with(root: Path, runner: str) -> Path:
    return make_eval(root / "ev", tasks={"t": "prompt: p\n"},
                     configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                     files={"configs/r.sh": "#!/bin/sh\n" + runner})


def only_run(ev: Path) -> tuple[Path, dict[str, Any]]:
    (folder,) = (ev / "results" / "runs").glob("*/*/*/*")
    return folder, json.loads((folder / "run.json").read_text())


def victim(path: Path, text: str = "secret\n") -> Path:
    path.write_text(text)
    path.chmod(0o640)
    return path


@pytest.mark.parametrize("target", ["file", "folder", "/proc/self/environ"])
def test_a_symlinked_output_txt_is_never_written_through(cli, tmp_path: Path, target: str) -> None:
    outside = {"file": victim(tmp_path / "victim"), "folder": tmp_path / "place",
               "/proc/self/environ": Path("/proc/self/environ")}[target]
    (tmp_path / "place").mkdir()
    ev = eval_with(tmp_path, f"echo answer\necho oops >&2\nrm -f output.txt\n"
                             f"ln -s '{outside}' output.txt\nln -s '{tmp_path}/place' stderr.txt\n")
    res = cli("run", str(ev), "--timeout", "20", timeout=QUICK)
    assert res.code == 1, res.both
    folder, rec = only_run(ev)
    assert rec["status"] == "failed"
    assert rec["failure"] == {"kind": "artifact", "detail": (
        f"output.txt is a symlink to '{outside}' and stderr.txt is a symlink to "
        f"'{tmp_path}/place': not a regular file, so smevals removed it without following "
        "or opening it; the Run counts as failed")}
    assert (folder / "output.txt").read_text() == "answer\n"       # what the runner printed
    assert (folder / "stderr.txt").read_text() == "oops\n"
    assert not (folder / "output.txt").is_symlink() and not (folder / "stderr.txt").is_symlink()
    assert os.listdir(tmp_path / "place") == []
    if target == "file":
        assert outside.read_text() == "secret\n"
        assert stat.S_IMODE(outside.stat().st_mode) == 0o640
    assert cli("verify", str(ev), timeout=QUICK).code == 0


def test_hard_links_to_outside_files_are_copied_never_sealed(cli, tmp_path: Path) -> None:
    kept, out = victim(tmp_path / "kept"), victim(tmp_path / "out", "untouched\n")
    before = {p: (p.stat().st_ino, p.stat().st_nlink) for p in (kept, out)}
    ev = eval_with(tmp_path, f"echo answer\nln '{kept}' hard.txt\nmkdir sub\n"
                             f"ln '{kept}' sub/deep.txt\nrm -f output.txt\nln '{out}' output.txt\n")
    res = cli("run", str(ev), timeout=QUICK)
    assert res.code == 0, res.both
    for path in (kept, out):
        info = path.stat()
        assert (info.st_ino, info.st_nlink) == before[path]        # no link left in the store
        assert stat.S_IMODE(info.st_mode) == 0o640                # never made read-only
    assert out.read_text() == "untouched\n" and kept.read_text() == "secret\n"
    folder, rec = only_run(ev)
    assert rec["status"] == "ok"
    for name, text, mode in (("hard.txt", "secret\n", 0o440), ("sub/deep.txt", "secret\n", 0o440),
                             ("output.txt", "answer\n", 0o444)):
        info = os.lstat(folder / name)
        assert (folder / name).read_text() == text
        assert info.st_nlink == 1 and stat.S_IMODE(info.st_mode) == mode, name
    assert cli("verify", str(ev), timeout=QUICK).code == 0


SOCKET = "python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('{}')\"\n"


def test_fifos_and_sockets_never_block_a_run(cli, tmp_path: Path) -> None:
    ev = eval_with(tmp_path, "echo answer\necho oops >&2\nmkfifo output.txt pipe "
                             "smevals-usage.json\n" + SOCKET.format("stderr.txt")
                   + SOCKET.format("sock"))
    res = cli("run", str(ev), "--timeout", "20", timeout=QUICK)
    assert res.code == 1, res.both
    folder, rec = only_run(ev)
    assert rec["failure"]["detail"].startswith(
        "output.txt is a FIFO and stderr.txt is a socket: not a regular file, so smevals "
        "removed it without following or opening it")
    assert rec["usage_error"] == "smevals-usage.json is a FIFO, not a regular file; it was not read"
    assert rec["files"] == [
        {"path": "output.txt", "sha256": rec["files"][0]["sha256"], "size": 7},
        {"path": "pipe", "special": True},
        {"path": "smevals-usage.json", "special": True},
        {"path": "sock", "special": True},
        {"path": "stderr.txt", "sha256": rec["files"][4]["sha256"], "size": 5}]
    assert stat.S_ISFIFO(os.lstat(folder / "pipe").st_mode)
    assert cli("verify", str(ev), timeout=QUICK).code == 0


def test_verify_and_grade_agree_on_a_socket_or_fifo_a_runner_left(cli, tmp_path: Path) -> None:
    """Issue 34 item 5: the Run records them as special files (never opened), so it is sound:
    `verify` says so and `grade` grades it (it called the Run damaged, so it was never
    graded); a regular file put in a special file's place is damage for both."""
    ev = eval_with(tmp_path, "echo it says hi\nmkfifo pipe\n" + SOCKET.format("sock"))
    assert cli("run", str(ev), timeout=QUICK).code == 0
    folder, rec = only_run(ev)
    assert [f for f in rec["files"] if f.get("special")] == [
        {"path": "pipe", "special": True}, {"path": "sock", "special": True}]
    assert cli("verify", str(ev), timeout=QUICK).out == "OK: 1 object(s) verified, no problems\n"
    res = cli("grade", str(ev), timeout=QUICK)
    assert (res.code, res.err) == (0, ""), res.both
    assert "Graded 1 Run(s): 1 pass, 0 fail" in res.out
    assert cli("verify", str(ev), timeout=QUICK).code == 0
    folder.chmod(0o755)
    (folder / "sock").unlink()
    (folder / "sock").write_text("forged\n")
    res = cli("verify", str(ev), timeout=QUICK)
    assert res.code == 1
    assert f"{shown(folder / 'sock')}: special file replaced by a regular file\n" in res.out
    shutil.rmtree(ev / "results" / "grades")
    res = cli("grade", str(ev), timeout=QUICK)
    assert "Graded 0 Run(s)" in res.out
    assert f"{folder}: sock: special file replaced by a regular file or a symlink\n" in res.err


def test_a_committed_fifo_as_output_txt_does_not_hang_grade(cli, tmp_path: Path) -> None:
    ev = eval_with(tmp_path, "echo answer\n")
    assert cli("run", str(ev), timeout=QUICK).code == 0
    folder, _rec = only_run(ev)
    folder.chmod(0o755)
    (folder / "output.txt").unlink()
    os.mkfifo(folder / "output.txt")
    res = cli("grade", str(ev), timeout=QUICK)
    assert res.code == 0, res.both
    assert "Graded 0 Run(s)" in res.out
    assert f"{folder}: output.txt: a FIFO where the record lists a regular file\n" in res.err
    assert not (ev / "results" / "grades").exists()
    res = cli("verify", str(ev), timeout=QUICK)
    assert res.code == 1
    assert (f"{shown(folder / 'output.txt')}: regular file replaced by a special file (a FIFO, "
            "socket or device)\n") in res.out


@pytest.mark.parametrize("name", ["runs", "grades", "judges", ".staging"])
def test_a_store_folder_that_is_a_symlink_is_never_written_through(cli, tmp_path: Path,
                                                                   name: str) -> None:
    ev = eval_with(tmp_path, "echo it says hi\n")
    assert cli("run", str(ev), "-g", timeout=QUICK).code == 0
    root = ev / "results"
    outside = tmp_path / "outside"
    if (root / name).exists():
        shutil.move(root / name, outside)
    (outside / "precious").mkdir(parents=True)       # what `gc` would take for a leftover
    os.symlink(outside, root / name)
    listing = sorted(str(p.relative_to(outside)) for p in outside.rglob("*"))
    refusal = (f"Error: {root / name} is a symlink to '{outside}', not a folder: smevals never "
               "writes through it (remove it, then run `smevals verify`)\n")
    for args in (["run", str(ev), "-n", "2", "-g"], ["grade", str(ev)], ["gc", str(ev)]):
        res = cli(*args, timeout=QUICK)
        assert res.code == 2, (args, res.both)
        assert res.err.endswith(refusal), (args, res.err)
    assert sorted(str(p.relative_to(outside)) for p in outside.rglob("*")) == listing
    res = cli("verify", str(ev), timeout=QUICK)
    assert res.code == 1
    assert (f"{shown(root / name)}: a symlink to '{outside}', not a folder: smevals never reads "
            "or writes through it\n") in res.out


def test_a_linked_folder_below_runs_is_never_written_through(cli, tmp_path: Path) -> None:
    ev = eval_with(tmp_path, "echo it says hi\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (ev / "results" / "runs").mkdir(parents=True)
    os.symlink(outside, ev / "results" / "runs" / "t")
    res = cli("run", str(ev), timeout=QUICK)
    assert res.code == 2, res.both
    assert res.err.endswith(f"Error: {ev}/results/runs/t is a symlink to '{outside}', not a "
                            "folder: smevals never writes through it (remove it, then run "
                            "`smevals verify`)\n")
    assert os.listdir(outside) == []
    assert os.listdir(ev / "results" / ".staging") == [".gitignore"]   # nothing left behind
    res = cli("verify", str(ev), timeout=QUICK)
    assert res.code == 1
    assert f"{shown(ev / 'results' / 'runs' / 't')}: stray entry outside any object folder\n" \
        in res.out
