"""Child processes (issue 14): real deadlines, trees killed, output capped while read, bad
artifact names failing one Run, and children dying with `smevals run`."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from smevals.site import jsdata
from tests.helpers import SMEVALS, Result, make_eval, run_cli_process
from tests.helpers.processes import gone, marker_pid
from tests.helpers.records import run_dirs, runs


@pytest.fixture
def cli() -> Callable[..., Result]:
    """The processes smevals starts are the subject here: smevals runs as a real process, as
    a user's does (then it is the subreaper of what it starts, and its guardian runs)."""
    return run_cli_process

# A detached sleeper: its own session (so not in the runner's process group), re-parented
# once its shell exits, holding the runner's stdout; it writes its pid to a marker file.
DETACH = "setsid sh -c 'echo $$ > \"$SMEVALS_EVAL_DIR/sleeper.pid\"; exec sleep 45' &\n"


def one_task(tmp_path: Path, runner: str, config: str = "") -> Path:
    return make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                     configs={"default": f"runner: ./r.sh\nmodel: m1\n{config}"},
                     files={"configs/r.sh": runner})


def test_runner_timeout_kills_a_detached_child_that_holds_stdout(cli, tmp_path: Path) -> None:
    ev = one_task(tmp_path, "#!/bin/sh\n" + DETACH + "echo started\nsleep 45\n")
    # waiting for the detached sleeper would take 45 s: the harness's 30 s limit fails that
    res = cli("run", str(ev), "--timeout", "1", timeout=30)
    assert res.code == 1
    (rec,) = runs(ev)
    assert rec["failure"] == {"kind": "timeout", "detail": "timed out after 1s; the runner and "
                                                           "every process it started were killed"}
    assert rec["exit_code"] is None
    assert rec["status"] == "failed"
    assert (run_dirs(ev)[0] / "output.txt").read_text() == "started\n"
    assert gone(marker_pid(ev))


def test_runner_that_exits_leaves_no_detached_child_behind(cli, tmp_path: Path) -> None:
    ev = one_task(tmp_path, "#!/bin/sh\n" + DETACH + "echo done\n")
    res = cli("run", str(ev), timeout=30)
    assert res.code == 0, res.err
    (rec,) = runs(ev)
    assert rec["status"] == "ok"          # and returned within the harness's 30 s limit
    assert (run_dirs(ev)[0] / "output.txt").read_text() == "done\n"
    assert gone(marker_pid(ev))


def test_checker_timeout_kills_a_detached_child_that_holds_stdout(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   graders={"default": "checks:\n  - checker: ./slow.sh\n    timeout: 1\n"},
                   files={"configs/echo.sh": "#!/bin/sh\necho hi\n",
                          "graders/slow.sh": "#!/bin/sh\n" + DETACH + "sleep 45\n"})
    assert cli("run", str(ev)).code == 0
    res = cli("grade", str(ev), timeout=30)
    assert res.code == 1
    (grade,) = [json.loads(p.read_text())
                for p in (ev / "results" / "grades").rglob("grade.json")]
    assert grade["checks"][0]["notes"] == ("checker timed out after 1s; the checker and every "
                                           "process it started were killed")
    assert gone(marker_pid(ev))


RSS_RUNNER = """
#!/usr/bin/env python3
import sys
for _ in range(200):
    sys.stdout.buffer.write(b"x" * 1_000_000)
print("tail", file=sys.stderr)
"""


PEAK = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def test_runner_output_is_capped_while_read(tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.py\nmodel: m1\n"},
                   files={"configs/r.py": RSS_RUNNER})
    # Through a small launcher: a process's peak RSS starts from its parent's at fork and
    # exec, so measured straight from pytest (hundreds of MB late in a session) it said
    # more about pytest than about smevals.
    res = subprocess.run([sys.executable, "-c", PEAK, SMEVALS, "run", str(ev)],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True)
    code, peak = map(int, res.stdout.split())
    assert code == 0
    # KiB, of smevals and the runner. Reading all of it took 788 MB; streaming with the
    # cap takes about 55 MB, far from a copy of the 200 MB printed.
    assert peak < 150 * 1024
    (rec,) = runs(ev)
    assert rec["truncated"] == {"output.txt": {"kept_bytes": 10485760,
                                               "written_bytes": 200_000_000}}
    run_dir = run_dirs(ev)[0]
    assert (run_dir / "output.txt").stat().st_size == 10485760
    assert (run_dir / "stderr.txt").read_text() == "tail\n"


CUT_RUNNER = """
#!/usr/bin/env python3
import sys
sys.stdout.write("é" * 600)
sys.stderr.write("e" * 2000)
"""


def test_max_output_bytes_raises_or_lowers_the_cap_and_reports_say_so(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.py\nmodel: m1\nmax_output_bytes: 1001\n"},
                   graders={"default": "checks:\n  - checker: contains\n    value: é\n"},
                   files={"configs/r.py": CUT_RUNNER})
    assert cli("run", str(ev), "-g", "default").code == 0
    (rec,) = runs(ev)
    assert rec["truncated"] == {"output.txt": {"kept_bytes": 1001, "written_bytes": 1200},
                                "stderr.txt": {"kept_bytes": 1001, "written_bytes": 2000}}
    assert rec["text"] == {"output_bytes_replaced": False, "stderr_bytes_replaced": False}
    run_dir = run_dirs(ev)[0]
    assert (run_dir / "output.txt").read_text() == "é" * 500      # no half character
    assert (run_dir / "stderr.txt").read_text() == "e" * 1001
    res = cli("report", str(ev))
    assert res.code == 0
    assert ("- Note: 1 run(s) wrote more output than the cap and were cut (output.txt or "
            "stderr.txt; the config key max_output_bytes raises the cap)") in res.out
    data = json.loads(cli("report", str(ev), "--format", "json").out)
    assert data["evals"][0]["notes"][0].startswith("1 run(s) wrote more output than the cap")
    assert cli("build", str(ev), "-o", str(tmp_path / "site")).code == 0
    (page,) = (tmp_path / "site" / "data").rglob("runs/*.js")
    assert jsdata.decode(page.read_bytes())[1]["record"]["truncated"] == rec["truncated"]


def test_max_output_bytes_must_be_a_positive_integer(cli, tmp_path: Path) -> None:
    ev = one_task(tmp_path, "#!/bin/sh\necho hi\n", "max_output_bytes: 0\n")
    res = cli("run", str(ev))
    assert res.code == 2
    assert "configs/default.yaml:3" in res.err and "max_output_bytes" in res.err
    assert not (ev / "results" / "runs").exists()


BAD_NAME_RUNNER = """
#!/usr/bin/env python3
import os
if os.environ["SMEVALS_TASK"] == "a":
    open(b"bad\\xff.txt", "wb").write(b"x")
    os.mkdir(b"dir\\xfe")
    open(b"dir\\xfe/inner.txt", "wb").write(b"y")
open("fine.txt", "w").write("kept")
print("hi")
"""


def test_an_artifact_name_that_is_not_utf8_fails_that_run_only(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"a": "prompt: a\n", "b": "prompt: b\n"},
                   configs={"default": "runner: ./r.py\nmodel: m1\n"},
                   files={"configs/r.py": BAD_NAME_RUNNER})
    res = cli("run", str(ev))
    assert res.code == 1, res.err
    assert "Internal error" not in res.err
    a, b = runs(ev)
    assert a["status"] == "failed"
    assert a["failure"] == {
        "kind": "artifact",
        "detail": "the runner wrote 2 file(s) whose name is not valid UTF-8 ('bad\\xff.txt', "
                  "'dir\\xfe'); they were not kept and the Run counts as failed"}
    assert sorted(f["path"] for f in a["files"]) == ["fine.txt", "output.txt"]
    assert b["status"] == "ok"
    assert cli("verify", str(ev)).code == 0


def test_runners_and_their_children_die_with_a_killed_smevals_run(tmp_path: Path) -> None:
    runner = ("#!/bin/sh\nsleep 30 &\necho $! > \"$SMEVALS_EVAL_DIR/child.pid\"\n"
              "echo $$ > \"$SMEVALS_EVAL_DIR/runner.pid\"\nwait\n")
    ev = one_task(tmp_path, runner)
    proc = subprocess.Popen([SMEVALS, "run", str(ev), "-j", "2"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        pid = marker_pid(ev, "runner.pid")
        child = marker_pid(ev, "child.pid")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert gone(pid, within=3.0)
        assert gone(child, within=3.0)
    finally:
        proc.kill()
        proc.wait()
