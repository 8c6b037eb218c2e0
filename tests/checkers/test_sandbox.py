"""What `match_output` contains (docs/security.md names these tests, one per threat)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from smevals.proc.contain import containment
from tests.helpers import SMEVALS, Result, make_eval, run_cli_process
from tools.processes import with_arg

SANDBOX = containment().name


@pytest.fixture
def cli() -> Callable[..., Result]:
    """The processes smevals starts are the subject here: smevals runs as a real process, as
    a user's does (then it is the subreaper of what it starts, and its guardian runs)."""
    return run_cli_process


def check(cli, program: str, expected: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """The Check's result, less `details.sandbox` (which must name the containment)."""
    spec = json.dumps({"checker": "match_output", "expected_output": expected, "timeout": 20})
    res = cli("check", spec, "--output", textwrap.dedent(program), env=env, timeout=60)
    assert res.code in (0, 1), res.err
    result = json.loads(res.out)
    assert result["details"].pop("sandbox") == SANDBOX
    if not result["details"]:
        del result["details"]
    return result


SECRETS = {"OPENAI_API_KEY": "sk-test-leak", "GITHUB_TOKEN": "ghp-test-leak", "AWS_SECRET": "s"}


def test_no_secret_reaches_the_program(cli) -> None:
    program = """
    import os
    leaked = sorted(k for k in os.environ if k.endswith(("_KEY", "_TOKEN", "_SECRET")))
    print(leaked, os.environ["HOME"] == os.getcwd())
    """
    assert check(cli, program, "[] True", SECRETS) == {"ok": True, "score": 1.0}


# Every way a program could read its parents' environment or command line: its parent's
# /proc entries, every /proc/PID, the same through /proc/self/.., process 1, file
# descriptors left open, and /proc unmounted first (to uncover the machine's /proc).
PROC_READER = """
import os, subprocess
needles = [b"sk-test-" + b"leak", b"ghp-test-" + b"leak", b"max_output" + b"_bytes"]

def scan(root):
    found = set()
    for name in os.listdir(root):
        for what in ("environ", "cmdline"):
            try:
                with open(os.path.join(root, name, what), "rb") as fh:
                    data = fh.read()
            except OSError:
                continue
            found |= {what for needle in needles if needle in data}
    return found

found = scan("/proc") | scan("/proc/self/..") | scan("/proc/thread-self/../..")
for path in (f"/proc/{os.getppid()}/environ", f"/proc/{os.getppid()}/cmdline",
             "/proc/1/environ", "/proc/self/../1/environ"):
    try:
        with open(path, "rb") as fh:
            found |= {path for needle in needles if needle in fh.read()}
    except OSError:
        pass
fds = []
for fd in range(3, 1024):
    try:
        os.fstat(fd)
        fds.append(fd)
    except OSError:
        pass
try:
    subprocess.run(["umount", "/proc"], stderr=subprocess.DEVNULL)
except OSError:
    pass
found |= scan("/proc")
print(sorted(found), fds)
"""


def test_no_process_of_smevals_can_be_read_through_proc(cli) -> None:
    if not containment().processes:
        pytest.skip("no PID namespace can be made here: the program is not run (see below)")
    spec = json.dumps({"checker": "match_output", "expected_output": "[] []",
                       "max_output_bytes": 65536})
    res = cli("check", spec, "--output", PROC_READER, env=SECRETS)
    assert (res.code, json.loads(res.out)) == (0, {"ok": True, "score": 1.0,
                                                   "details": {"sandbox": SANDBOX}}), res.out


def test_without_a_pid_namespace_the_program_is_not_run_while_secrets_are_about(
        tmp_path: Path) -> None:
    # no bwrap, unshare or setpriv on PATH: no namespace can be made; the environment is
    # exactly this one (the machine's may hold other secrets). Without its own view of the
    # files the program does not run at all unless the Check asks for the host's view.
    bare = tmp_path / "bin"
    bare.mkdir()
    spec = json.dumps({"checker": "match_output", "expected_output": "ran",
                       "sandbox": {"view": "host"}})

    def check_with(env: dict[str, str], given: str = spec) -> tuple[int, dict[str, object]]:
        proc = subprocess.run(
            [SMEVALS, "check", given, "--output", "print('ran')"], capture_output=True,
            text=True, timeout=60,
            env={"PATH": str(bare), "SMEVALS_CACHE_DIR": str(tmp_path / "cache"), **env})
        return proc.returncode, json.loads(proc.stdout)

    assert check_with(SECRETS) == (2, {
        "ok": False, "error": True, "details": {"sandbox": "none"},
        "notes": "not run: no PID namespace can be made here, so the program could read "
                 "smevals' environment, which holds AWS_SECRET, GITHUB_TOKEN, OPENAI_API_KEY "
                 "(see docs/security.md); unset them, or set SMEVALS_ALLOW_UNCONTAINED=1 to "
                 "run it anyway"})
    ran = (0, {"ok": True, "score": 1.0, "details": {"sandbox": "none, host view"}})
    assert check_with({**SECRETS, "SMEVALS_ALLOW_UNCONTAINED": "1"}) == ran
    # with no secret in its environment, smevals runs the program (and says how, above)
    assert check_with({}) == ran
    viewless = json.dumps({"checker": "match_output", "expected_output": "ran"})
    assert check_with({}, viewless) == (2, {
        "ok": False, "error": True, "details": {"sandbox": "none"},
        "notes": "sandbox: backend 'auto' cannot build the program's own view of the "
                 "filesystem here (bwrap: not installed; unshare: not installed), so it "
                 "would see every file of the machine; this machine gives: none; `view: "
                 "host` runs it with the machine's files in sight"})


def test_the_program_cannot_reach_the_network(cli) -> None:
    if not containment().network:
        pytest.skip("no network namespace can be made here (see docs/security.md)")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        program = f"""
        import socket
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
            print("connected")
        except OSError:
            print("blocked")
        """
        assert check(cli, program, "blocked") == {"ok": True, "score": 1.0}


def test_detached_descendants_are_killed_at_the_end(cli) -> None:
    arg = f"45.{os.getpid()}{time.monotonic_ns() % 10**6}"
    program = f"""
    import os, subprocess, time
    subprocess.Popen(["setsid", "sh", "-c", "echo $$ > sleeper.pid; exec sleep {arg}"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    marker = "sleeper.pid"
    while not (os.path.exists(marker) and os.path.getsize(marker)):
        time.sleep(0.01)            # the detached child runs before the program ends
    time.sleep(0.1)                 # and has become `sleep`
    print(42)
    """
    assert check(cli, program, "42") == {"ok": True, "score": 1.0}
    end = time.monotonic() + 3
    while with_arg(arg) and time.monotonic() < end:
        time.sleep(0.05)
    assert with_arg(arg) == []


def test_files_are_limited_in_size(cli) -> None:
    program = """
    try:
        with open("big.bin", "wb") as fh:
            fh.write(b"x" * (80 * 1024 * 1024))
        print("written")
    except OSError as exc:
        print(exc.strerror)
    """
    assert check(cli, program, "File too large") == {"ok": True, "score": 1.0}


def test_processes_are_limited(cli) -> None:
    program = """
    import os, resource
    soft = resource.getrlimit(resource.RLIMIT_NPROC)[0]
    mine = sum(len(os.listdir(f"/proc/{p}/task")) for p in os.listdir("/proc")
               if p.isdigit() and os.path.exists(f"/proc/{p}/task")
               and os.stat(f"/proc/{p}").st_uid == os.getuid())
    print(soft != resource.RLIM_INFINITY and soft - mine < 1000)
    """
    assert check(cli, program, "True") == {"ok": True, "score": 1.0}


LEAKER = """
```python
import os, pathlib
pathlib.Path("leak.txt").write_text("left behind")
here = pathlib.Path.cwd()
for up in (here.parent, here.parent.parent):
    for found in (up / "runs").rglob("output.txt") if (up / "runs").is_dir() else ():
        found.write_text("tampered")
print(42)
```
"""


def test_writes_stay_in_a_private_folder(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   graders={"default": "checks:\n  - checker: match_output\n"
                                       "    expected_output: 42\n"},
                   files={"configs/echo.sh": "#!/bin/sh\ncat <<'EOF'\n" + LEAKER + "EOF\n"})
    assert cli("run", str(ev), "-g", "default").code == 0
    (grade_json,) = (ev / "results" / "grades").rglob("grade.json")
    grade = json.loads(grade_json.read_text())
    assert grade["outcome"] == "pass"
    assert grade["checks"][0]["details"] == {"sandbox": SANDBOX}     # said in the Grade
    assert "leak.txt" not in [f["path"] for f in grade["files"]]
    (output,) = (ev / "results" / "runs").rglob("output.txt")
    assert output.read_text() != "tampered"
    assert cli("verify", str(ev)).code == 0


def test_a_command_that_cannot_start_is_named_not_blamed_on_the_wrapper(cli) -> None:
    spec = json.dumps({"checker": "match_output", "expected_output": "1",
                       "command": ["no-such-interpreter"]})
    res = cli("check", spec, "--output", "print(1)")
    assert (res.code, json.loads(res.out)) == (1, {
        "ok": False, "notes": "cannot start no-such-interpreter: No such file or directory",
        "details": {"sandbox": SANDBOX}})
