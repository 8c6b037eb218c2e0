"""The sandbox's Policy (smevals.proc.sandbox): the backends, the network switch, the
refusals, the container command line and the private copy of a folder."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from smevals.proc.contain import available, containment
from smevals.proc.policy import Policy
from smevals.proc.private import CopyLimit, private_copy
from smevals.proc.sandbox import (
    Bind,
    SandboxRefused,
    describe,
    run_sandboxed,
    sandbox_env,
)

if not sys.platform.startswith("linux"):
    pytest.skip("the sandbox's namespaces are Linux's", allow_module_level=True)

LOCAL = containment()


def policy(home: Path, **fields: Any) -> Policy:
    return Policy(20, sandbox_env(os.environ, home), **fields)


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def fake_runtime(folder: Path, name: str, info_exit: int = 0, run: str = "echo ran") -> Path:
    """A `docker`/`podman` that records each argv (one argument a line, then `--`) and
    answers `info` with `info_exit`; `run` is what it does for `run`."""
    folder.mkdir(exist_ok=True)
    log = folder / f"{name}.argv"
    script = folder / name
    script.write_text(
        "#!/bin/sh\n"
        f'for a in "$@"; do printf "%s\\n" "$a" >> {log}; done; echo -- >> {log}\n'
        f'case "$1" in info) exit {info_exit};; run) {run};; esac\n')
    script.chmod(0o755)
    return log


def calls(log: Path) -> list[list[str]]:
    found: list[list[str]] = []
    current: list[str] = []
    for line in log.read_text().splitlines():
        if line == "--":
            found.append(current)
            current = []
        else:
            current.append(line)
    return found


# --- the private copy --------------------------------------------------------------------

def test_private_copy_takes_files_and_folders_and_names_what_it_leaves_out(
        tmp_path: Path) -> None:
    src, outside = tmp_path / "src", tmp_path / "outside"
    (src / "pkg" / "deep").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (src / "main.py").write_text("print(1)\n")
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o755)
    (src / "pkg" / "deep" / "data.bin").write_bytes(b"\0\xff" * 10)
    (src / "link-to-file").symlink_to(outside / "secret.txt")
    (src / "pkg" / "link-to-dir").symlink_to(outside)
    os.mkfifo(src / "pipe")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(src / "pkg" / "sock"))
        done = private_copy(src, tmp_path / "copy")
    copy = tmp_path / "copy"
    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*")) == [
        "main.py", "pkg", "pkg/deep", "pkg/deep/data.bin", "run.sh"]
    assert (done.files, done.folders, done.bytes) == (3, 2, 9 + 10 + 20)
    assert done.dropped == ["link-to-file (symlink)", "pipe (fifo)", "pkg/link-to-dir (symlink)",
                            "pkg/sock (socket)"]
    assert (copy / "pkg" / "deep" / "data.bin").read_bytes() == b"\0\xff" * 10
    assert stat.S_IMODE((copy / "run.sh").stat().st_mode) == 0o755
    (copy / "main.py").write_text("changed")               # writable, and private
    assert (src / "main.py").read_text() == "print(1)\n"


def test_private_copy_keeps_names_that_are_not_utf8_and_names_them_readably(
        tmp_path: Path) -> None:
    src = os.fsencode(tmp_path / "src")
    os.mkdir(src)
    with open(os.path.join(src, b"caf\xe9.txt"), "wb") as fh:
        fh.write(b"x")
    os.symlink(b"/etc/passwd", os.path.join(src, b"l\xff"))
    done = private_copy(tmp_path / "src", tmp_path / "copy")
    assert os.listdir(os.fsencode(tmp_path / "copy")) == [b"caf\xe9.txt"]
    assert done.dropped == ["l\ufffd (symlink)"]


def test_private_copy_is_bounded_and_never_follows_a_linked_source(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "a" / "b" / "c").mkdir(parents=True)
    for i in range(5):
        (src / f"f{i}").write_bytes(b"x" * 100)
    with pytest.raises(CopyLimit, match="more than 4 files and folders"):
        private_copy(src, tmp_path / "c1", max_files=4)
    with pytest.raises(CopyLimit, match="more than 450 bytes"):
        private_copy(src, tmp_path / "c2", max_bytes=450)
    with pytest.raises(CopyLimit, match=r"folders nested deeper than 1 \(a/b/\)"):
        private_copy(src, tmp_path / "c3", max_depth=1)
    (tmp_path / "linked").symlink_to(src)
    with pytest.raises(OSError):
        private_copy(tmp_path / "linked", tmp_path / "c4")
    assert not (tmp_path / "c4").exists() or list((tmp_path / "c4").iterdir()) == []


# --- the local backends ------------------------------------------------------------------

def test_the_default_policy_hides_the_network_and_names_its_containment(tmp_path: Path) -> None:
    assert describe(policy(tmp_path)) == LOCAL.name
    out = run_sandboxed(python("print('hi')"), tmp_path, policy(tmp_path))
    assert (out.exit_code, out.stdout, out.sandbox) == (0, b"hi\n", LOCAL.name)


LIMIT_ROWS = ("Max cpu time", "Max file size", "Max processes", "Max core file size",
              "Max address space")


def limits_seen(text: str) -> dict[str, tuple[str, str]]:
    """(soft, hard) of the limits the policy sets, from /proc/self/limits."""
    rows = {}
    for line in text.splitlines():
        for name in LIMIT_ROWS:
            if line.startswith(name + " "):
                soft, hard = line[len(name):].split()[:2]
                rows[name] = (soft, hard)
    return rows


@pytest.mark.parametrize("kind", ["bwrap", "unshare"])
def test_the_limits_hold_inside_and_bwrap_is_started_without_a_fork(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The program sees the policy's limits in both ways of making its view. bwrap (which
    dies with smevals by itself) gets them from `prlimit` before it runs, so smevals starts
    it by vfork, running no Python in the child; unshare's view is made by Python in the
    child, which needs the fork."""
    import subprocess

    from tests.helpers.backends import use

    started: list[dict[str, Any]] = []
    real = subprocess.Popen

    def popen(argv: Any, **kwargs: Any) -> Any:
        started.append({"argv": list(argv), "preexec_fn": kwargs.get("preexec_fn")})
        return real(argv, **kwargs)

    with use(kind, monkeypatch):
        pol = Policy(7, sandbox_env(os.environ, tmp_path), memory_mb=512, file_mb=8,
                     processes=32)
        monkeypatch.setattr(subprocess, "Popen", popen)
        out = run_sandboxed(["/bin/cat", "/proc/self/limits"], tmp_path, pol)
    assert (out.exit_code, out.stderr) == (0, b"")
    seen = limits_seen(out.stdout.decode())
    nproc = seen["Max processes"]          # the user's processes at the start, plus 32
    assert seen == {"Max cpu time": ("8", "9"), "Max file size": ("8388608", "8388608"),
                    "Max processes": seen["Max processes"], "Max core file size": ("0", "0"),
                    "Max address space": ("536870912", "536870912")}
    assert nproc[0] == nproc[1] and int(nproc[0]) > 32
    (child,) = [s for s in started if "/proc/self/limits" in s["argv"]]
    if kind == "bwrap":
        assert os.path.basename(child["argv"][0]) == "prlimit" and child["preexec_fn"] is None
    else:
        assert child["preexec_fn"] is not None


def test_network_true_reaches_a_local_server_but_still_hides_the_processes(
        tmp_path: Path) -> None:
    if not LOCAL.processes:
        pytest.skip("no PID namespace can be made here")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        code = (f"import socket, os\n"
                f"socket.create_connection(('127.0.0.1', {port}), timeout=5).close()\n"
                f"print('connected', os.getpid(), sorted(p for p in os.listdir('/proc') "
                f"if p.isdigit()))\n")
        out = run_sandboxed(python(code), tmp_path, policy(tmp_path, network=True))
    assert out.stdout == b"connected 1 ['1']\n", out.stderr
    assert out.sandbox == f"{LOCAL.name}, network allowed"
    blocked = run_sandboxed(python(code), tmp_path, policy(tmp_path))
    assert b"connected" not in blocked.stdout and blocked.exit_code == 1


def test_a_named_backend_that_is_not_here_is_refused_never_replaced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("unshare", "setpriv"):        # this machine's unshare, but no bwrap
        if found := shutil.which(tool):
            (bare / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bare))
    with pytest.raises(SandboxRefused) as refused:
        run_sandboxed(["true"], tmp_path, policy(tmp_path, backend="bwrap"))
    assert refused.value.reason == (
        "sandbox: backend 'bwrap' cannot be used here (bwrap is not installed); this machine "
        f"gives: {', '.join(available())}")
    assert refused.value.sandbox == "none"
    (bare / "unshare").unlink()
    assert available() == ["none"]
    with pytest.raises(SandboxRefused, match=r"^sandbox: require: true asks for the network "
                       r"and other processes to be hidden, and the strongest containment "
                       r"here is 'none'; this machine gives: none$"):
        describe(policy(tmp_path, require=True))
    with pytest.raises(SandboxRefused, match=r"^sandbox: backend 'auto' cannot build the "
                       r"program's own view of the filesystem here \(bwrap: not installed; "
                       r"unshare: not installed\)"):
        describe(policy(tmp_path))                     # never run with the host in sight ...
    assert describe(policy(tmp_path, view="host")) == "none, host view"     # ... unless asked
    assert describe(policy(tmp_path, backend="none", view="host")) == "none, host view"


def test_read_only_is_given_or_refused(tmp_path: Path) -> None:
    """`read_only` asks for something only with `view: host`: the private view is always
    read-only outside the program's folders."""
    with pytest.raises(SandboxRefused) as refused:
        describe(policy(tmp_path, backend="none", read_only=True, view="host"))
    assert refused.value.reason == (
        "sandbox: read_only: true asks for everything but the program's folder to be "
        "read-only, and 'none' cannot make a mount namespace here; this machine gives: "
        f"{', '.join(available())}")
    if LOCAL.processes:
        assert describe(policy(tmp_path, read_only=True, network=True, view="host")) == (
            f"{LOCAL.name}, network allowed, read-only, host view")
        assert describe(policy(tmp_path, read_only=True, network=True)) == (
            f"{LOCAL.name}, network allowed")


def test_require_is_met_where_a_pid_namespace_can_be_made(tmp_path: Path) -> None:
    if not LOCAL.processes:
        pytest.skip("no PID namespace can be made here")
    assert describe(policy(tmp_path, require=True)) == LOCAL.name
    assert describe(policy(tmp_path, require=True, network=True)) == (
        f"{LOCAL.name}, network allowed")


def test_only_the_names_a_setting_lists_pass_the_scrubbed_environment(tmp_path: Path) -> None:
    environ = {"PATH": "/bin", "OPENAI_API_KEY": "sk", "MODEL_URL": "http://m", "LC_ALL": "C"}
    assert sandbox_env(environ, tmp_path, ["MODEL_URL"]) == {
        "PATH": "/bin", "MODEL_URL": "http://m", "LC_ALL": "C", "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path), "TMP": str(tmp_path), "TEMP": str(tmp_path)}


# --- the container backends --------------------------------------------------------------

def test_docker_runs_the_program_in_a_throw_away_container_with_the_limits_as_flags(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = fake_runtime(tmp_path / "bin", "docker")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    work = tmp_path / "work"
    work.mkdir()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "MODEL_URL": "http://m"}
    pol = Policy(7, env, memory_mb=256, processes=32, file_mb=8, backend="docker",
                 image="example/image:1")
    assert describe(pol) == "docker (example/image:1)"
    out = run_sandboxed([sys.executable, str(work / "prog.py"), "arg"], work, pol)
    # the workspace at /workspace, argv and HOME (through the runtime's own environment)
    # translated into it, as in the local view
    assert (out.exit_code, out.stdout, out.error, out.sandbox) == (
        0, b"ran\n", None, "docker (example/image:1)")
    info, run = calls(log)
    assert info[0] == "info"
    name = run[run.index("--name") + 1]
    assert name.startswith("smevals-")
    assert run == [
        "run", "--rm", "--name", name, "--network", "none", "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges", "--read-only", "--tmpfs", "/tmp",
        "--user", f"{os.getuid()}:{os.getgid()}", "--memory", "256m", "--memory-swap", "256m",
        "--pids-limit", "32", "--ulimit", f"fsize={8 << 20}:{8 << 20}",
        "--ulimit", "cpu=8:9", "--ulimit", "core=0:0",
        "--volume", f"{work}:/workspace", "--workdir", "/workspace",
        "--env", "HOME", "--env", "MODEL_URL", "--env", "PATH",
        "example/image:1", Path(sys.executable).name, "/workspace/prog.py", "arg"]
    home, report = tmp_path / "home", tmp_path / "out"
    home.mkdir()
    report.mkdir()
    pol = Policy(7, {**env, "HOME": str(home)}, backend="docker", expose=(str(tmp_path),),
                 binds=(Bind(str(report), "/smevals/out", writable=True),))
    assert describe(pol) == f"docker (python:3.11-slim), exposing {tmp_path}"
    run_sandboxed(["prog"], work, pol)
    flags = calls(log)[-1]
    at = flags.index("--workdir")
    assert flags[at - 2:at + 10] == [
        "--volume", f"{work}:/workspace", "--workdir", "/workspace",
        "--volume", f"{home}:/home/sandbox", "--volume", f"{tmp_path}:{tmp_path}:ro",
        "--volume", f"{report}:/smevals/out", "--env", "HOME"]


def test_a_container_stopped_at_its_deadline_is_removed_from_the_daemon(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = fake_runtime(tmp_path / "bin", "podman", run="exec sleep 30")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    pol = Policy(0.5, {"PATH": "/bin"}, backend="podman", network=True)
    out = run_sandboxed(["prog"], tmp_path, pol)
    assert (out.timed_out, out.sandbox) == (True, "podman, network allowed (python:3.11-slim)")
    info, run, rm = calls(log)
    assert run[run.index("--network") + 1] == "bridge"
    assert rm == ["rm", "--force", run[run.index("--name") + 1]]


def test_a_container_runtime_without_its_daemon_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_runtime(tmp_path / "bin", "docker", info_exit=1)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    with pytest.raises(SandboxRefused) as refused:
        describe(Policy(5, {}, backend="docker"))
    assert refused.value.reason == (
        f"sandbox: backend 'docker' cannot be used here ({tmp_path / 'bin' / 'docker'} info "
        f"failed: its daemon does not answer); this machine gives: {', '.join(available())}")


def test_a_real_container_runtime_where_there_is_one(tmp_path: Path) -> None:
    reasons = []
    for runtime in ("docker", "podman"):
        try:
            box = describe(Policy(60, {}, backend=runtime))
        except SandboxRefused as refused:
            reasons.append(refused.reason.partition(" (")[2].partition(")")[0])
            continue
        pol = policy(tmp_path, backend=runtime)
        out = run_sandboxed(["python3", "-c", "print(6 * 7)"], tmp_path, pol)
        assert (out.exit_code, out.stdout, out.sandbox) == (0, b"42\n", box), out.stderr
        return
    pytest.skip(f"no container runtime answers here: {'; '.join(reasons)}")
