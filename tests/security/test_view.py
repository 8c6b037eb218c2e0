"""Issue 34 item 1: what runs untrusted code sees only what it is given. The agent's `bash`
(in every local backend this machine has), the `command` checker, `match_output` and a
harness runner each try to read the hidden tests by a relative path, by their absolute
path and by walking `/`, to read the store, and to connect to Unix sockets bound in the
host's /tmp and in a folder standing for /run: all of it fails, the workspace is at
/workspace, and an honest agent Run still passes (tests/helpers/hostile.py)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from smevals.proc.sandbox import Policy, describe
from tests.helpers import Result, grade_records, make_eval
from tests.helpers.backends import KINDS, use
from tests.helpers.hostile import (
    HONEST,
    MARK,
    NOTHING,
    bash,
    host_sockets,
    hostile_eval,
    probe,
    probed,
    session,
)
from tests.helpers.records import run_dirs, runs

if not sys.platform.startswith("linux"):
    pytest.skip("the sandbox's namespaces are Linux's", allow_module_level=True)

CLI = Callable[..., Result]
MISSING = "No such file or directory"
SOCKET = """
import socket, sys
for path in sys.argv[1:]:
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.connect(path)
            print("connected", path)
        except OSError as error:
            print(error.strerror, path)
"""


def results(run_dir: Path) -> list[str]:
    """The output of each tool call of the Run, in order."""
    return [entry["output"] for entry in map(json.loads, (run_dir / "transcript.jsonl").open())
            if entry["type"] == "tool_result"]


def run_of(ev: Path, model: str) -> tuple[dict[str, object], Path]:
    [(record, folder)] = [(r, d) for r, d in zip(runs(ev), run_dirs(ev), strict=True)
                          if r["model"] == model]
    return record, folder


@pytest.mark.parametrize("kind", KINDS)
def test_the_agents_bash_sees_only_its_workspace_in_every_backend(
        cli: CLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    ev = hostile_eval(tmp_path / "ev")
    hidden, store = ev / "hidden" / "impl" / "test_hidden_impl.py", ev / "results"
    with host_sockets() as sockets, use(kind, monkeypatch) as name:
        session(ev, "honest", HONEST)
        res = cli("run", str(ev), "-m", "honest", "-g", "default")
        assert res.code == 0, res.both                # the honest Run passes its hidden test
        record, folder = run_of(ev, "honest")
        assert record["usage"]["sandbox"] == name     # type: ignore[index]
        assert results(folder)[1] == "42\n/workspace\n"
        [grade] = grade_records(ev)
        assert (grade["outcome"], grade["score"]) == ("pass", 1.0)
        ups = [".." + "/.." * n for n in range(5)]
        session(ev, "hacker", bash(
            "for up in " + " ".join(ups) + "; do cat $up/hidden/impl/test_hidden_impl.py; done",
            f"cat {hidden}; ls {store}",
            r"find / \( -path /proc -o -path /sys -o -path /usr \) -prune -o "
            r"-name test_hidden_impl.py -print",
            f"{sys.executable} -c {shlex.quote(SOCKET)} {' '.join(sockets)}",
            "pwd; echo $HOME; cat /etc/shadow"))
        assert cli("run", str(ev), "-m", "hacker").code == 0
    record, folder = run_of(ev, "hacker")
    assert record["usage"]["sandbox"] == name         # type: ignore[index]
    out = results(folder)
    assert all(MARK not in text for text in out)
    assert out[0] == "".join(f"cat: {up}/hidden/impl/test_hidden_impl.py: {MISSING}\n"
                             for up in ups) + "[exited with code 1]"
    assert out[1] == (f"cat: {hidden}: {MISSING}\nls: cannot access '{store}': {MISSING}\n"
                      f"[exited with code 2]")
    assert out[2] == ""                                # `find /` finds no hidden test
    assert out[3] == "".join(f"{MISSING} {path}\n" for path in sockets)
    shadow = "Permission denied" if os.path.exists("/etc/shadow") else MISSING
    assert out[4] == (f"/workspace\n/home/sandbox\ncat: /etc/shadow: {shadow}\n"
                      f"[exited with code 1]")


def test_command_runs_the_agents_code_where_it_sees_only_its_tree(cli: CLI,
                                                                  tmp_path: Path) -> None:
    ev = hostile_eval(tmp_path / "ev")
    with host_sockets() as sockets:
        code = probe(ev, sockets) + "\n\ndef answer():\n    return 42\n"
        session(ev, "hacker", [{"tool_calls": [{"name": "write_file", "arguments": {
            "path": "impl.py", "content": code}}]}, {"content": "done"}])
        res = cli("run", str(ev), "-m", "hacker", "-g", "default")
    assert res.code == 0, res.both
    [grade] = grade_records(ev)
    [check] = grade["checks"]
    assert (check["ok"], check["details"]["sandbox"]) == (True, describe(Policy(1, {})))
    [kept] = (ev / "results" / "grades").rglob("command.hidden-tests.stdout.txt")
    seen = probed(kept.read_text())
    # its own tree holds the hidden tests it is graded by, at /workspace; nothing else does
    assert seen == {**NOTHING, "cwd": "/workspace", "home": "/home/sandbox",
                    "find": ["/workspace/test_hidden_impl.py"]}


def test_match_output_runs_model_code_that_sees_only_its_folder(cli: CLI,
                                                                tmp_path: Path) -> None:
    with host_sockets() as sockets:
        ev = tmp_path / "ev"
        program = probe(ev, sockets)
        expected = "PROBE " + json.dumps({**NOTHING, "cwd": "/workspace", "home": "/workspace"},
                                         sort_keys=True)
        grader = ("checks:\n  - checker: match_output\n    timeout: 60\n    expected_output: "
                  f"{json.dumps(expected)}\n")
        hostile_eval(ev, configs={"default": "runner: ./show.sh\nmodel: m\n"},
                     graders={"default": grader},
                     files={"configs/show.sh": "#!/bin/sh\ncat <<'EOF'\n```python\n"
                                               + program + "```\nEOF\n"})
        res = cli("run", str(ev), "-g", "default")
    assert res.code == 0, res.both
    [grade] = grade_records(ev)
    assert grade["checks"][0]["ok"] is True, grade["checks"][0]
    [kept] = (ev / "results" / "grades").rglob("match_output.stdout.txt")
    assert probed(kept.read_text())["find"] == []


FAKE_CODEX = """#!{python}
import contextlib, io, json, os
said = io.StringIO()
with contextlib.redirect_stdout(said):
    exec({probe!r})
with open("probe.txt", "w") as handle:
    handle.write(said.getvalue())
names = ("HOME", "TMPDIR", "CODEX_HOME", "XDG_CONFIG_HOME")
with open("env.json", "w") as handle:
    json.dump({{name: os.environ.get(name) for name in names}}, handle)
for event in ({{"type": "thread.started", "thread_id": "t"}}, {{"type": "turn.started"}},
              {{"type": "item.completed", "item": {{"id": "i", "type": "agent_message",
                                                   "text": "done"}}}},
              {{"type": "turn.completed", "usage": {{"input_tokens": 1, "output_tokens": 1}}}}):
    print(json.dumps(event), flush=True)
"""


def test_a_harness_sees_only_its_workspace_and_home(cli: CLI, tmp_path: Path) -> None:
    with host_sockets() as sockets:
        ev = tmp_path / "ev"
        fake = FAKE_CODEX.format(python=sys.executable, probe=probe(ev, sockets))
        make_eval(ev, tasks={"impl": "prompt: Fix it\n"},
                  configs={"default": "runner: smevals:codex\nmodel: m\n"
                                      "executable: ../bin/codex\n"},
                  files={"bin/codex": fake, "hidden/impl/test_hidden_impl.py": f"# {MARK}\n"})
        res = cli("run", str(ev))
    assert res.code == 0, res.both
    [record], [folder] = runs(ev), run_dirs(ev)
    assert record["usage"]["sandbox"] == describe(Policy(1, {}, network=True))
    assert probed((folder / "probe.txt").read_text()) == {
        **NOTHING, "cwd": "/workspace", "home": "/home/sandbox"}
    # its variables point into its view: the same paths on every machine
    assert json.loads((folder / "env.json").read_text()) == {
        "HOME": "/home/sandbox", "TMPDIR": "/home/sandbox/tmp",
        "CODEX_HOME": "/home/sandbox/.codex", "XDG_CONFIG_HOME": "/home/sandbox/config"}
