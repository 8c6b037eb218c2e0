"""smevals:agent's tools: confined to the Run's workspace (paths, links, hard links, FIFOs,
smevals' own names), capped, and `bash` in the sandbox (timeouts, children, secrets, the
sandbox: setting, no network)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.agent import (
    TASK,
    agent,
    answer,
    call,
    entries,
    record,
    results,
    tools,
)


def test_paths_outside_the_workspace_are_refused(tmp_path, make_ctx) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "out").symlink_to(outside)
    (workspace / "leak.txt").symlink_to(outside / "secret.txt")
    os.mkfifo(workspace / "pipe")
    record(tmp_path, [tools(
        call("write_file", {"path": "/tmp/x.txt", "content": "x"}),
        call("write_file", {"path": "../x.txt", "content": "x"}),
        call("write_file", {"path": "out/x.txt", "content": "x"}),
        call("read_file", {"path": "out/secret.txt"}),
        call("read_file", {"path": "leak.txt"}),
        call("read_file", {"path": "pipe"}),
        call("write_file", {"path": "leak.txt", "content": "mine"}),
        call("write_file", {"path": "output.txt", "content": "forged"}),
        call("list_files", {}),
        call("list_files", {"path": "out"}),
    ), answer("ok")])
    outcome, _ = agent(make_ctx)
    assert outcome.exit_code == 0
    assert results(workspace) == [
        ("write_file", "'/tmp/x.txt' is not relative to the workspace: give a relative path "
                       "such as 'src/main.py'", True),
        ("write_file", "'../x.txt' goes up with '..': paths stay inside the workspace", True),
        ("write_file", f"out is a symlink to {str(outside)!r}, not a folder (links are never "
                       "followed)", True),
        ("read_file", f"out is a symlink to {str(outside)!r}, not a folder (links are never "
                      "followed)", True),
        ("read_file", f"leak.txt is a symlink to {str(outside / 'secret.txt')!r}: not a "
                      "regular file, not read (links are never followed)", True),
        ("read_file", "pipe is a FIFO: not a regular file, not read (links are never "
                      "followed)", True),
        ("write_file", "wrote 4 bytes to leak.txt", False),
        ("write_file", "output.txt is a name smevals keeps for itself; choose another", True),
        ("list_files", f"leak.txt\nout -> {outside}\npipe", False),
        ("list_files", f"out is a symlink to {str(outside)!r}, not a folder (links are never "
                       "followed)", True),
    ]
    # the write replaced the link in the workspace; the file outside is untouched
    assert (workspace / "leak.txt").read_text() == "mine"
    assert not (workspace / "leak.txt").is_symlink()
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "s3cret"
    assert not (tmp_path / "x.txt").exists()


def test_hard_link_is_not_written_through(tmp_path, make_ctx) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("original")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    os.link(outside, workspace / "linked.txt")
    record(tmp_path, [tools(call("write_file", {"path": "linked.txt", "content": "new"})),
                      answer("ok")])
    outcome, _ = agent(make_ctx)
    assert outcome.exit_code == 0
    assert (workspace / "linked.txt").read_text() == "new"
    assert outside.read_text() == "original"


def test_tool_output_is_capped(tmp_path, make_ctx) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "big.txt").write_text("x" * 5000)
    record(tmp_path, [tools(call("read_file", {"path": "big.txt"})), answer("ok")])
    outcome, _ = agent(make_ctx, {"max_tool_output": 1000})
    [(_name, output, error)] = results(workspace)
    assert output == "x" * 1000 + "\n[... 4000 more characters not shown]"
    assert not error


def test_command_past_its_timeout_and_its_children_are_killed(tmp_path, make_ctx) -> None:
    marker = "987654.25"
    command = f"for i in 1 2 3 4 5 6 7 8; do (setsid sleep {marker} &); done; sleep {marker}"
    record(tmp_path, [tools(call("bash", {"command": command})), answer("ok")])
    outcome, workspace = agent(make_ctx, {"tool_timeout": 1})
    assert outcome.exit_code == 0
    [(_name, output, error)] = results(workspace)
    assert output == "[timed out after 1 s (every process it started was killed)]"
    assert error
    assert [pid for pid in os.listdir("/proc") if pid.isdigit() and marker.encode()
            in _cmdline(pid)] == []


def _cmdline(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_the_runs_timeout_ends_a_command_and_the_run(tmp_path, make_ctx) -> None:
    record(tmp_path, [tools(call("bash", {"command": "sleep 30"})), answer("never")])
    outcome, workspace = agent(make_ctx, timeout=1.0)
    assert (outcome.exit_code, outcome.failure) == (1, "timeout")
    assert outcome.stderr == "smevals:agent: timed out after 1 s\n"
    assert results(workspace)[0][2] is True


def test_bash_sees_no_secret_and_a_private_home(tmp_path, make_ctx, monkeypatch) -> None:
    import tempfile

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))      # where the private home is made
    record(tmp_path, [tools(call("bash", {"command": "env | sort | grep -v '^_='; pwd; "
                                                     "echo x > $HOME/made; ls $HOME"})),
                      answer("ok")])
    environ = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "MY_API_KEY": "s3cret"}
    outcome, workspace = agent(make_ctx, environ=environ)
    [(_name, output, _error)] = results(workspace)
    assert "s3cret" not in output and "MY_API_KEY" not in output
    lines = output.splitlines()
    assert [line for line in lines if line.startswith(("HOME=", "TMPDIR="))] == [
        "HOME=/home/sandbox", "TMPDIR=/home/sandbox"]        # at one path, on every machine
    assert lines[-2:] == ["/workspace", "made"]
    assert not [p for p in temp.iterdir() if p.name.startswith("smevals-agent-home-")]


def test_only_the_tools_the_config_names(tmp_path, make_ctx) -> None:
    record(tmp_path, [tools(call("bash", {"command": "ls"})), answer("ok")])
    outcome, workspace = agent(make_ctx, {"tools": ["read_file", "list_files"]})
    assert results(workspace) == [
        ("bash", "unknown tool 'bash'; the tools are: read_file, list_files", True)]
    assert outcome.usage is not None and "sandbox" not in outcome.usage


def test_links_at_smevals_own_names_are_replaced_not_written_through(tmp_path, make_ctx
                                                                     ) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("t.txt", "u.txt"):
        (outside / name).write_text("mine")
    command = (f"ln -s {outside}/t.txt transcript.jsonl && "
               f"ln -s {outside}/u.txt smevals-usage.json")
    record(tmp_path, [tools(call("bash", {"command": command})), answer("ok")])
    outcome, workspace = agent(make_ctx)
    assert outcome.exit_code == 0
    assert not (workspace / "transcript.jsonl").is_symlink()
    assert entries(workspace)[-1]["text"] == "ok"
    assert [(outside / n).read_text() for n in ("t.txt", "u.txt")] == ["mine", "mine"]


def test_a_command_printing_without_end_is_stopped(tmp_path, make_ctx) -> None:
    record(tmp_path, [tools(call("bash", {"command": "yes flood"})), answer("ok")])
    outcome, workspace = agent(make_ctx, {"max_tool_output": 1000, "tool_timeout": 30})
    [(_name, output, error)] = results(workspace)
    assert output.startswith("flood\nflood\n")
    body, notes = output.split("\n[... ", 1)
    assert len(body) == 1000
    assert notes == ("3000 more characters not shown]\n"
                     "[stdout passed the output cap of 4000 bytes (stopped)]")
    assert error


def test_listing_stops_deep_and_writes_stop_at_the_runs_budget(tmp_path, make_ctx,
                                                              monkeypatch) -> None:
    from smevals.runners.agent import confined

    workspace = tmp_path / "workspace"
    (workspace / ("d/" * 40)).mkdir(parents=True)
    monkeypatch.setattr(confined, "WRITE_BUDGET", 10)
    record(tmp_path, [tools(call("list_files", {}),
                            call("write_file", {"path": "a.txt", "content": "123456"}),
                            call("write_file", {"path": "b.txt", "content": "123456"})),
                      answer("ok")])
    outcome, _ = agent(make_ctx)
    listing, first, second = results(workspace)
    lines = listing[1].splitlines()
    assert len(lines) == 33
    assert lines[-1] == "d/" * 32 + "d/ [not entered: deeper than 32 folders]"
    assert first == ("write_file", "wrote 6 bytes to a.txt", False)
    assert second == ("write_file", "not written: the Run's write_file calls may write 0 MiB "
                                    "in all, and 6 bytes are written", True)


def test_bash_runs_under_the_configs_sandbox_setting_with_the_tasks_on_top(tmp_path,
                                                                          make_ctx) -> None:
    record(tmp_path, [tools(call("bash", {"command": "ulimit -f; echo $ONE_VAR"})),
                      answer("ok")])
    environ = {"PATH": os.environ["PATH"], "ONE_VAR": "passed", "OTHER": "not"}
    config = {"sandbox": {"file_mb": 1, "env": ["ONE_VAR"]}}
    _, workspace = agent(make_ctx, config, environ=environ)
    assert results(workspace)[0][1] == "1024\npassed\n"
    task = {**TASK, "sandbox": {"file_mb": 2}}
    _, workspace = agent(make_ctx, config, environ=environ, task=task)
    assert results(workspace)[0][1] == "2048\npassed\n"


def test_bash_reaches_no_socket(tmp_path, make_ctx) -> None:
    import socket

    from smevals.proc.contain import containment

    if not containment().network:
        pytest.skip("no network namespace can be made here")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        command = f"(: <>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected || echo blocked"
        record(tmp_path, [tools(call("bash", {"command": command})), answer("ok")])
        _, workspace = agent(make_ctx)
    assert results(workspace)[0][1] == "blocked\n"


def test_no_command_runs_uncontained_beside_a_secret(tmp_path, make_ctx, monkeypatch) -> None:
    monkeypatch.setenv("MY_API_KEY", "s3cret")
    monkeypatch.delenv("SMEVALS_ALLOW_UNCONTAINED", raising=False)
    record(tmp_path, [tools(call("bash", {"command": "echo hi"})), answer("ok")])
    outcome, workspace = agent(make_ctx, {"sandbox": {"backend": "none", "view": "host"}})
    assert (outcome.exit_code, outcome.failure) == (1, "launch")
    assert outcome.stderr.startswith("smevals:agent: sandbox refused: not run: no PID namespace "
                                     "can be made here")
    assert "MY_API_KEY" in outcome.stderr
    assert [e["type"] for e in entries(workspace)] == ["error"]
    monkeypatch.setenv("SMEVALS_ALLOW_UNCONTAINED", "1")
    outcome, workspace = agent(make_ctx, {"sandbox": {"backend": "none", "view": "host"}})
    assert results(workspace) == [("bash", "hi\n", False)]
    assert outcome.usage is not None and outcome.usage["sandbox"] == "none, host view"


def test_an_agent_that_removes_its_workspace_fails_the_run(tmp_path, make_ctx) -> None:
    record(tmp_path, [tools(call("bash", {"command": 'rm -rf "$PWD"'})), answer("gone")])
    outcome, workspace = agent(make_ctx, {"sandbox": {"read_only": False, "view": "host"}})
    assert (outcome.exit_code, outcome.failure) == (1, "exit")
    assert outcome.stderr == ("smevals:agent: cannot write transcript.jsonl into the "
                              "workspace: No such file or directory\n")
    assert not workspace.exists()


def test_read_only_keeps_every_write_of_bash_in_the_workspace(tmp_path, make_ctx) -> None:
    """By default (and with `read_only: true` or `false`) bash works in its own view of
    the files: it writes only in the workspace, its home and its /tmp, and finds nothing of
    the machine's; `rm -rf "$PWD"` cannot remove the workspace itself. With `view: host`
    and `read_only: true`, the machine's files are there, read-only."""
    from smevals.proc.contain import find
    from smevals.proc.sandbox import Policy, describe

    outside = tmp_path / "outside.txt"
    command = (f"echo in > in.txt; echo out > {outside}; echo home > $HOME/h; cat in.txt $HOME/h;"
               f" rm -rf \"$PWD\"")
    for setting in ({}, {"sandbox": {"read_only": True}}, {"sandbox": {"read_only": False}}):
        record(tmp_path, [tools(call("bash", {"command": command})), answer("ok")])
        outcome, workspace = agent(make_ctx, setting)
        [(_name, output, _error)] = results(workspace)
        lines = output.splitlines()                # stdout, then stderr
        assert lines[:3] == ["in", "home", f"bash: line 1: {outside}: No such file or directory"]
        assert not outside.exists()
        assert outcome.exit_code == 0 and workspace.is_dir()
        assert outcome.usage is not None and outcome.usage["sandbox"] == describe(Policy(1, {}))
    if find("auto", False, True) is None:
        pytest.skip("no mount namespace can be made here")
    record(tmp_path, [tools(call("bash", {"command": command})), answer("ok")])
    outcome, workspace = agent(make_ctx, {"sandbox": {"read_only": True, "view": "host"}})
    [(_name, output, _error)] = results(workspace)
    assert output.splitlines()[:3] == [
        "in", "home", f"bash: line 1: {outside}: Read-only file system"]
    assert outcome.usage is not None and outcome.usage["sandbox"].endswith(
        ", read-only, host view")


def test_a_command_filling_the_disk_stops_at_the_file_size_limit(tmp_path, make_ctx) -> None:
    command = "head -c 3000000 /dev/zero > big.bin"
    record(tmp_path, [tools(call("bash", {"command": command})), answer("ok")])
    outcome, workspace = agent(make_ctx, {"sandbox": {"file_mb": 1}})
    [(_name, output, error)] = results(workspace)
    assert (workspace / "big.bin").stat().st_size == 1 << 20
    assert output.endswith("[exited with code 153]")          # 128 + SIGXFSZ
    assert error and outcome.exit_code == 0
