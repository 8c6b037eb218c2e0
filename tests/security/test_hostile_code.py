"""Hostile code through the one sandbox (`run_sandboxed` on a private copy of a folder, as
the agent's tools, `command` and `match_output` use it): each threat of issue 28's "Bad
input and hostile agents" is contained, and the Outcome says why it failed. Limits are
small, so no test can hurt the machine."""

from __future__ import annotations

import os
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from smevals.proc.contain import containment, find
from smevals.proc.private import private_copy
from smevals.proc.sandbox import Outcome, Policy, run_sandboxed
from smevals.proc.setting import Setting
from tools.processes import with_arg

if not sys.platform.startswith("linux"):
    pytest.skip("the sandbox's namespaces are Linux's", allow_module_level=True)

LOCAL = containment()


@pytest.fixture
def private() -> Iterator[Path]:
    """A private folder where the callers make theirs: a fresh temporary folder."""
    with tempfile.TemporaryDirectory(prefix="smevals-sandbox-") as tmp:
        yield Path(tmp).resolve() / "work"


def run(code: str, cwd: Path, timeout: float = 20, cap: int = 1 << 20,
        **setting: Any) -> tuple[Outcome, Policy]:
    """`code` run by Python in `cwd` under the `sandbox:` setting `setting`."""
    pol = Setting.merged(setting).policy(timeout, cwd, cap=cap)
    return run_sandboxed([sys.executable, "-c", code], cwd, pol), pol


def none_left(arg: str) -> bool:
    end = time.monotonic() + 3
    while with_arg(arg) and time.monotonic() < end:
        time.sleep(0.05)
    return with_arg(arg) == []


def unique() -> str:
    return f"45.{os.getpid()}{time.monotonic_ns() % 10**7}"


def workspace(root: Path) -> Path:
    """A Run's workspace: two files, one in a folder."""
    ws = root / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "main.py").write_text("v1\n")
    (ws / "src" / "util.py").write_text("u1\n")
    return ws


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_writes_land_in_the_private_copy_and_the_real_folder_is_untouched(
        tmp_path: Path, private: Path) -> None:
    ws = workspace(tmp_path)
    before = tree(ws)
    private_copy(ws, private)
    code = """
import os, pathlib
pathlib.Path("main.py").write_text("v2")
pathlib.Path("src/util.py").unlink()
pathlib.Path("new.txt").write_text("new")
for up in ("..", "../..", "../../.."):
    try:
        pathlib.Path(up, "escaped.txt").write_text("out")
    except OSError:
        pass
print(os.environ.get("SMEVALS_RUN_DIR"), os.getcwd() == os.environ["HOME"])
"""
    out, pol = run(code, private)
    assert (out.stdout, out.why(pol)) == (b"None True\n", None), out.stderr
    assert tree(ws) == before                               # the real folder: untouched
    assert tree(private) == {"main.py": b"v2", "new.txt": b"new"}     # the copy: its work
    assert not list(tmp_path.rglob("escaped.txt"))


def test_a_symlink_out_of_the_workspace_never_reaches_the_copy(tmp_path: Path,
                                                               private: Path) -> None:
    ws = workspace(tmp_path)
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("secret")
    (ws / "notes.txt").symlink_to(secret)
    (ws / "src" / "up").symlink_to(tmp_path / "outside")
    done = private_copy(ws, private)
    assert done.dropped == ["notes.txt (symlink)", "src/up (symlink)"]
    code = """
import pathlib
for name in ("notes.txt", "src/up/secret.txt"):
    try:
        print(pathlib.Path(name).read_text())
    except OSError as exc:
        print(type(exc).__name__)
"""
    out, _ = run(code, private)
    assert out.stdout == b"FileNotFoundError\nFileNotFoundError\n"
    assert secret.read_text() == "secret"


def test_filling_the_disk_stops_at_the_file_size_limit(private: Path) -> None:
    private.mkdir()
    pol = Setting.merged({"file_mb": 1}).policy(20, private)
    out = run_sandboxed(["sh", "-c", "exec head -c 3000000 /dev/zero > big.bin"], private, pol)
    # the kernel sends SIGXFSZ (some, gVisor's, fail the write with EFBIG instead)
    assert out.why(pol) == "killed by SIGXFSZ: a file reached the size limit of 1 MiB" or (
        out.why(pol) == "exited with code 1" and b"File too large" in out.stderr)
    assert (private / "big.bin").stat().st_size == 1 << 20
    # Python ignores SIGXFSZ: its write fails instead, and the program can say so
    out, pol = run("open('big2.bin', 'wb').write(b'x' * 3000000)", private, file_mb=1)
    assert b"OSError: [Errno 27] File too large" in out.stderr
    assert out.why(pol) == "exited with code 1"


FORKER = """
import os, resource, sys, time
soft = resource.getrlimit(resource.RLIMIT_NPROC)[0]
forked = 0
for _ in range(60):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.execvp("sleep", ["sleep", "{arg}"])
    forked += 1
print(forked, soft != resource.RLIM_INFINITY, flush=True)
time.sleep(60)
"""


def test_forking_without_end_is_limited_and_every_process_dies_at_the_deadline(
        private: Path) -> None:
    private.mkdir()
    arg = unique()
    out, pol = run(FORKER.replace("{arg}", arg), private, timeout=3, processes=8)
    forked, limited = out.stdout.split()
    assert limited == b"True"                      # RLIMIT_NPROC is set ...
    if os.getuid() != 0:                           # ... and the kernel applies it but to root
        assert int(forked) <= 8
    assert out.why(pol) == "timed out after 3 s (every process it started was killed)"
    assert none_left(arg)


def test_a_socket_reaches_nothing_unless_the_network_is_allowed(private: Path) -> None:
    if not LOCAL.network:
        pytest.skip("no network namespace can be made here (docs/agents.md#the-sandbox)")
    private.mkdir()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        code = f"""
import socket
try:
    socket.create_connection(("127.0.0.1", {server.getsockname()[1]}), timeout=3).close()
    print("connected")
except OSError as exc:
    print("blocked", exc.errno)
"""
        out, _ = run(code, private)
        assert out.stdout.startswith(b"blocked"), out.stdout
        if LOCAL.processes:
            out, _ = run(code, private, network=True)
            assert out.stdout == b"connected\n"


def test_a_daemon_left_behind_is_killed(private: Path) -> None:
    private.mkdir()
    arg = unique()
    code = f"""
import subprocess, time
subprocess.Popen(["setsid", "sh", "-c", "(exec sleep {arg}) & echo started"],
                 stdout=subprocess.PIPE).stdout.readline()
time.sleep(0.2)
print("bye")
"""
    out, _ = run(code, private)
    assert (out.exit_code, out.stdout) == (0, b"bye\n")
    assert none_left(arg)


def test_gigabytes_of_output_are_capped_and_the_program_stopped(private: Path) -> None:
    private.mkdir()
    code = "import sys\nwhile True:\n    sys.stdout.buffer.write(b'x' * 65536)\n"
    out, pol = run(code, private, timeout=60, cap=100_000)
    # stopped at the cap, not at the deadline: `timed_out` is False
    assert (len(out.stdout), out.over_cap, out.timed_out) == (100_000, ["stdout"], False)
    assert out.why(pol) == "stdout passed the output cap of 100000 bytes (stopped)"


def test_secrets_in_the_environment_pass_only_when_the_setting_names_them(
        private: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    private.mkdir()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-leak")
    monkeypatch.setenv("MODEL_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("SMEVALS_ALLOW_UNCONTAINED", "1")      # where no PID namespace is
    code = "import os; print(sorted(k for k in os.environ if k in ('OPENAI_API_KEY', " \
           "'MODEL_URL')))"
    assert run(code, private)[0].stdout == b"[]\n"
    assert run(code, private, env=["MODEL_URL"])[0].stdout == b"['MODEL_URL']\n"


def test_with_read_only_nothing_outside_the_folder_can_be_written(tmp_path: Path,
                                                                   private: Path) -> None:
    """With the machine's files in sight (`view: host`), `read_only` keeps them unwritten;
    the private view (tests/security/test_view.py) has none of them."""
    if find("auto", read_only=True) is None:
        pytest.skip("no mount namespace can be made here: read_only is refused (see "
                    "test_sandbox_policy.py)")
    ws = workspace(tmp_path)
    private_copy(ws, private)
    target = tmp_path / "ws" / "main.py"
    code = f"""
import pathlib
pathlib.Path("main.py").write_text("v2")
pathlib.Path("src/new.py").write_text("new")
open("/dev/null", "w").write("fine")
for path in ({str(target)!r}, {str(tmp_path / "new.txt")!r}, "/tmp/smevals-escape.txt"):
    try:
        pathlib.Path(path).write_text("out")
        print("wrote", path)
    except OSError as exc:
        print(exc.strerror)
"""
    out, pol = run(code, private, read_only=True, view="host")
    assert out.stdout == b"Read-only file system\n" * 3, out.stderr
    assert out.sandbox == f"{LOCAL.name}, read-only, host view"
    assert tree(ws) == {"main.py": b"v1\n", "src/util.py": b"u1\n"}
    assert tree(private) == {"main.py": b"v2", "src/new.py": b"new", "src/util.py": b"u1\n"}
    assert not (tmp_path / "new.txt").exists()


def test_read_only_keeps_a_folder_named_through_a_link_writable(tmp_path: Path) -> None:
    if find("auto", read_only=True) is None:
        pytest.skip("no mount namespace can be made here")
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    for view in ("host", "private"):
        out, _ = run(f"open('made-{view}.txt', 'w').write('x')", tmp_path / "link",
                     read_only=True, view=view)
        assert (out.exit_code, out.stderr) == (0, b"")
        assert (tmp_path / "real" / f"made-{view}.txt").read_text() == "x"
