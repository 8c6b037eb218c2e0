"""What `match_output` contains (docs/security.md names these tests, one per threat)."""

from __future__ import annotations

import json
import socket
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from smevals.checkers.sandbox import network_isolation
from tests.helpers import Result, make_eval, run_cli_process
from tests.helpers.processes import gone, marker_pid


@pytest.fixture
def cli() -> Callable[..., Result]:
    """The processes smevals starts are the subject here: smevals runs as a real process, as
    a user's does (then it is the subreaper of what it starts, and its guardian runs)."""
    return run_cli_process


def check(cli, program: str, expected: str, env: dict[str, str] | None = None) -> dict:
    spec = json.dumps({"checker": "match_output", "expected_output": expected, "timeout": 20})
    res = cli("check", spec, "--output", textwrap.dedent(program), env=env, timeout=60)
    assert res.code in (0, 1), res.err
    return json.loads(res.out)


def test_no_secret_reaches_the_program(cli) -> None:
    program = """
    import os
    leaked = sorted(k for k in os.environ if k.endswith(("_KEY", "_TOKEN", "_SECRET")))
    print(leaked, os.environ["HOME"] == os.getcwd())
    """
    env = {"OPENAI_API_KEY": "sk-test", "GITHUB_TOKEN": "ghp-test", "AWS_SECRET": "s"}
    assert check(cli, program, "[] True", env) == {"ok": True, "score": 1.0}


def test_the_program_cannot_reach_the_network(cli) -> None:
    if not network_isolation():
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


def test_detached_descendants_are_killed_at_the_end(cli, tmp_path: Path) -> None:
    program = f"""
    import os, subprocess, time
    subprocess.Popen(["setsid", "sh", "-c", "echo $$ > {tmp_path}/sleeper.pid; exec sleep 45"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    marker = "{tmp_path}/sleeper.pid"
    while not (os.path.exists(marker) and os.path.getsize(marker)):
        time.sleep(0.01)            # the detached child runs before the program ends
    print(42)
    """
    assert check(cli, program, "42") == {"ok": True, "score": 1.0}
    assert gone(marker_pid(tmp_path))


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
    assert "leak.txt" not in [f["path"] for f in grade["files"]]
    (output,) = (ev / "results" / "runs").rglob("output.txt")
    assert output.read_text() != "tampered"
    assert cli("verify", str(ev)).code == 0


def test_a_command_that_cannot_start_is_named_not_blamed_on_the_wrapper(cli) -> None:
    spec = json.dumps({"checker": "match_output", "expected_output": "1",
                       "command": ["no-such-interpreter"]})
    res = cli("check", spec, "--output", "print(1)")
    assert (res.code, json.loads(res.out)) == (1, {
        "ok": False, "notes": "cannot start no-such-interpreter: No such file or directory"})
