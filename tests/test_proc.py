"""smevals.proc directly: the paths the CLI tests do not choose (the /proc scan without the
subreaper, cleared environments, limits through the pre-exec function, launch errors)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from smevals.proc import Limits, Spec, run_child, tree
from tests.helpers import Result, make_eval, run_cli_process
from tests.helpers.processes import gone, marker_pid


@pytest.fixture
def cli() -> Callable[..., Result]:
    """The processes smevals starts are the subject here: smevals runs as a real process, as
    a user's does (then it is the subreaper of what it starts, and its guardian runs)."""
    return run_cli_process

if not sys.platform.startswith("linux"):
    pytest.skip("the tree is found through /proc", allow_module_level=True)


def sleeper(folder: Path, clear_env: bool = False) -> list[str]:
    env = "env -i " if clear_env else ""
    return ["sh", "-c", f"setsid {env}sh -c 'echo $$ > {folder}/sleeper.pid; exec sleep 45' & "
                        "echo started"]


def test_without_the_subreaper_a_scan_of_proc_finds_the_detached_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree, "_subreaper", False)
    res = run_child(Spec(sleeper(tmp_path), tmp_path, dict(os.environ), timeout=10))
    assert (res.exit_code, res.stdout.data, res.leftovers) == (0, b"started\n", 1)
    assert gone(marker_pid(tmp_path))


def test_a_detached_child_with_a_cleared_environment_is_killed_too(cli, tmp_path: Path) -> None:
    """Through the CLI, which owns its process: a subreaper adopts the sleeper."""
    runner = "#!/bin/sh\n" + " ".join(sleeper(tmp_path, clear_env=True)[2:]) + "\n"
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   files={"configs/r.sh": runner})
    assert cli("run", str(ev), "-j", "1", timeout=30).code == 0
    assert gone(marker_pid(tmp_path))


def test_output_past_the_cap_is_read_and_counted(tmp_path: Path) -> None:
    code = "import sys; sys.stdout.write('x' * 300000); sys.stderr.write('y' * 10)"
    res = run_child(Spec([sys.executable, "-c", code], tmp_path, dict(os.environ), cap=1000))
    assert res.exit_code == 0 and not res.over_cap
    assert (res.stdout.data, res.stdout.total, res.stdout.truncated) == (b"x" * 1000, 300000, True)
    assert (res.stderr.data, res.stderr.truncated) == (b"y" * 10, False)


def test_an_idle_child_is_stopped_and_its_output_kept(tmp_path: Path) -> None:
    """`idle`: no activity on stdout for that long stops the tree (not the deadline); a
    `watch` sees each chunk and decides what counts: here `retry` lines do not."""
    code = ("import sys, time; print('start', flush=True); time.sleep(1); "
            "[print('retry', flush=True) or time.sleep(0.3) for _ in range(1000)]")
    seen: list[bytes] = []

    def watch(chunk: bytes) -> bool:
        seen.append(chunk)
        return b"retry" not in chunk

    res = run_child(Spec([sys.executable, "-c", code], tmp_path, dict(os.environ), timeout=120,
                         idle=2.5, watch=watch))
    assert res.idle and not res.timed_out and res.exit_code != 0
    assert res.stdout.data.startswith(b"start\nretry\n")
    assert b"".join(seen) == res.stdout.data
    quiet = run_child(Spec([sys.executable, "-c", "print('done')"], tmp_path, dict(os.environ),
                           idle=60))
    assert (quiet.idle, quiet.exit_code, quiet.stdout.data) == (False, 0, b"done\n")


def test_limits_are_set_before_exec(tmp_path: Path) -> None:
    code = ("import resource as r; print(r.getrlimit(r.RLIMIT_FSIZE), "
            "r.getrlimit(r.RLIMIT_CORE))")
    res = run_child(Spec([sys.executable, "-c", code], tmp_path, dict(os.environ),
                         limits=Limits(file_bytes=4096, core_dumps=False)))
    assert res.stdout.data == b"(4096, 4096) (0, 0)\n"


@pytest.mark.parametrize("limits", [Limits(), Limits(core_dumps=False)])
def test_a_program_that_cannot_start_says_why(tmp_path: Path, limits: Limits) -> None:
    res = run_child(Spec([str(tmp_path / "missing")], tmp_path, {}, limits=limits))
    assert res.exit_code is None
    assert res.error == f"cannot start {tmp_path / 'missing'}: No such file or directory"


def test_the_guardian_kills_registered_trees_when_its_pipe_closes(tmp_path: Path) -> None:
    env = {**os.environ, tree.TAG_VAR: "cafe0123"}
    kept = subprocess.Popen(["sleep", "30"], env=env, start_new_session=True)
    ended = subprocess.Popen(["sleep", "30"], start_new_session=True)
    guard = subprocess.Popen([sys.executable, "-I", "-m", "smevals.proc.guardian"],
                             stdin=subprocess.PIPE, start_new_session=True)
    try:
        assert guard.stdin is not None
        guard.stdin.write(f"+ {kept.pid} cafe0123\n+ {ended.pid} beef\n- {ended.pid}\n".encode())
        guard.stdin.close()
        assert guard.wait(timeout=10) == 0
        assert kept.wait(timeout=5) == -9
        assert ended.poll() is None          # unregistered: left alone
    finally:
        for proc in (kept, ended, guard):
            proc.kill()
            proc.wait()


def tagged_process(tag: str, chain: bool) -> subprocess.Popen[bytes]:
    """A process whose environment holds `tag`: a sleep, or a chain of execs ending in one
    (as `setsid sh -c 'exec sleep 45'` starts)."""
    script = "exec sh -c 'exec sh -c \"exec sh -c \\\"exec sleep 30\\\"\"'" if chain else \
        "exec sleep 30"
    return subprocess.Popen(["sh", "-c", script], env={**os.environ, tree.TAG_VAR: tag})


def test_an_empty_environment_in_the_middle_of_an_exec_is_read_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The signal window (issue 41 item 3): a process shows an empty environment while it
    execs; its tag was missed, the tree's kill found nothing more and it lived on."""
    proc = tagged_process("t41window", chain=False)
    real, blanks = tree._read, [3]

    def read(path: str, limit: int = 1 << 20) -> bytes | None:
        if path.endswith("/environ") and blanks[0]:
            blanks[0] -= 1
            return b""                          # what an exec in progress shows
        return real(path, limit)

    monkeypatch.setattr(tree, "_read", read)
    try:
        assert tree._tagged(proc.pid, "t41window")
        assert blanks == [0]
    finally:
        proc.kill()
        proc.wait()


def test_a_chain_of_execs_never_loses_its_tag() -> None:
    """Read all along a chain of four execs, until it sleeps: the tag is always found."""
    for _ in range(10):
        proc = tagged_process("t41chain", chain=True)
        try:
            cmdline = b""
            while b"sleep" not in cmdline:
                cmdline = tree._read(f"/proc/{proc.pid}/cmdline") or b""
                assert tree._tagged(proc.pid, "t41chain")
        finally:
            proc.kill()
            proc.wait()


def test_a_cleared_environment_is_waited_for_once(monkeypatch: pytest.MonkeyPatch) -> None:
    proc = subprocess.Popen(["env", "-i", "sleep", "30"])
    reads: list[str] = []
    real = tree._read

    def read(path: str, limit: int = 1 << 20) -> bytes | None:
        reads.append(path)
        return real(path, limit)

    try:
        while b"sleep" not in (tree._read(f"/proc/{proc.pid}/cmdline") or b"env"):
            pass
        monkeypatch.setattr(tree, "_read", read)
        assert not tree._tagged(proc.pid, "anything")
        reads.clear()
        assert not tree._tagged(proc.pid, "anything")
        assert [r for r in reads if r.endswith("/environ")] == [f"/proc/{proc.pid}/environ"]
    finally:
        proc.kill()
        proc.wait()
