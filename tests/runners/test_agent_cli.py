"""smevals:agent end to end: `smevals run` and `validate` on temporary Evals."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.helpers import make_eval, run_cli

SESSION_OK = [
    {"content": "Looking first.", "tool_calls": [{"name": "list_files", "arguments": {}}],
     "usage": {"input_tokens": 50, "output_tokens": 5}},
    {"tool_calls": [{"name": "write_file", "arguments": {"path": "done.txt", "content": "yes"}}]},
    {"content": "done"},
]
SESSION_LOOPS = [{"tool_calls": [{"name": "list_files", "arguments": {}}]}] * 4
GRADER = """
checks:
  - checker: tool_called
    tools: [list_files, write_file]
"""


def agent_eval(root: Path, config: str) -> Path:
    ev = make_eval(root / "ev", tasks={"job": "prompt: Write done.txt.\n"},
                   configs={"default": config}, graders={"default": GRADER}, files={})
    for model, lines in (("good", SESSION_OK), ("loops", SESSION_LOOPS)):
        path = ev / "configs" / "sessions" / model / "job.jsonl"
        path.parent.mkdir(parents=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return ev


CONFIG = "runner: smevals:agent\nbackend: replay\nsessions: sessions\nmax_turns: 3\n"


def test_run_and_grade_two_models(tmp_path) -> None:
    ev = agent_eval(tmp_path, CONFIG)
    store = tmp_path / "store"
    result = run_cli("run", str(ev), "-m", "good", "-m", "loops", "-g", "--store", str(store))
    assert result.code == 1, result.both
    assert "job / default / good ... ok" in result.out
    assert "    grade: pass" in result.out
    assert ("job / default / loops ... FAILED (smevals:agent: turn limit: the model was still "
            "calling tools after max_turns 3)") in result.out
    assert result.err == "Error: 1 run(s) failed\n"
    [good] = (store / "ev" / "runs" / "job" / "default" / "good").iterdir()
    record = json.loads((good / "run.json").read_text())
    assert record["status"] == "ok"
    assert (good / "output.txt").read_text() == "done"
    assert (good / "done.txt").read_text() == "yes"
    assert [json.loads(line)["type"] for line in (good / "transcript.jsonl").open()] == [
        "message", "message", "message", "tool_call", "tool_result", "tool_call",
        "tool_result", "message"]
    assert [c["name"] for c in record["usage"]["tool_calls"]] == ["list_files", "write_file"]
    assert record["usage"]["turns"] == 3
    [loops] = (store / "ev" / "runs" / "job" / "default" / "loops").iterdir()
    failed = json.loads((loops / "run.json").read_text())
    assert failed["failure"] == {"kind": "exit", "detail": "smevals:agent: turn limit: the "
                                 "model was still calling tools after max_turns 3"}
    assert failed["usage"]["turns"] == 3
    assert (loops / "transcript.jsonl").is_file()


def test_bad_config_exits_2_naming_file_line_and_field(tmp_path) -> None:
    ev = agent_eval(tmp_path, "runner: smevals:agent\nbackend: replay\nmax_turns: many\n"
                              "tools: [bash, curl]\n")
    result = run_cli("validate", str(ev))
    assert result.code == 2
    assert "configs/default.yaml:3:1: max_turns: must be an integer, not string" in result.err
    assert ("configs/default.yaml:4:1: tools.1: 'curl' is not one of ['bash', 'read_file', "
            "'write_file', 'list_files']") in result.err
    assert "configs/default.yaml:1:9: sessions: required by smevals:agent with backend: " \
        "replay" in result.err
    run = run_cli("run", str(ev), "-m", "good", "--store", str(tmp_path / "store"))
    assert run.code == 2
    assert not (tmp_path / "store" / "ev" / "runs").exists()


def test_a_sandbox_this_machine_cannot_give_is_refused_before_any_run(tmp_path) -> None:
    from smevals.proc.contain import available

    missing = next(b for b in ("bwrap", "podman", "docker", "unshare") if b not in available())
    ev = agent_eval(tmp_path, CONFIG + f"sandbox: {{backend: {missing}}}\n")
    result = run_cli("run", str(ev), "-m", "good", "--store", str(tmp_path / "store"))
    assert result.code == 2
    assert f"configs/default.yaml:5:1: sandbox: backend '{missing}' cannot be used here (" \
        in result.err
    assert not (tmp_path / "store" / "ev" / "runs").exists()


def test_a_usage_file_link_the_agent_left_is_never_written_through(tmp_path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("keep me")
    ev = agent_eval(tmp_path, CONFIG)
    session = [{"tool_calls": [{"name": "bash", "arguments": {
        "command": f"ln -s {outside} smevals-usage.json"}}]}, {"content": "done"}]
    path = ev / "configs" / "sessions" / "good" / "job.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in session))
    store = tmp_path / "store"
    result = run_cli("run", str(ev), "-m", "good", "--store", str(store))
    assert result.code == 0, result.both
    assert outside.read_text() == "keep me"
    [run] = (store / "ev" / "runs" / "job" / "default" / "good").iterdir()
    assert json.loads((run / "run.json").read_text())["usage"]["turns"] == 2


def test_a_runner_that_removes_or_replaces_its_workspace_fails_its_run(tmp_path) -> None:
    # bash can remove its workspace only with the machine's files, where they are writable
    ev = agent_eval(tmp_path, CONFIG + "sandbox:\n  read_only: false\n  view: host\n")
    session = [{"tool_calls": [{"name": "bash", "arguments": {"command": 'rm -rf "$PWD"'}}]},
               {"content": "gone"}]
    path = ev / "configs" / "sessions" / "good" / "job.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in session))
    (ev / "configs" / "swap.sh").write_text(
        '#!/bin/sh\nd="$PWD"; cd ..; rm -rf "$d"; ln -s /etc "$d"\n')
    (ev / "configs" / "swap.sh").chmod(0o755)
    (ev / "configs" / "swap.yaml").write_text("runner: ./swap.sh\nmodel: m1\n")
    store = tmp_path / "store"
    result = run_cli("run", str(ev), "-m", "good", "--store", str(store))
    assert result.code == 1, result.both
    assert ("job / default / good ... FAILED (the runner removed its workspace folder; the "
            "Run counts as failed)") in result.out
    assert "  | smevals:agent: cannot write transcript.jsonl into the workspace: No such " \
        "file or directory" in result.out
    result = run_cli("run", str(ev), "-c", "swap", "--store", str(store))
    assert result.code == 1, result.both
    assert ("job / swap / m1 ... FAILED (the runner removed its workspace folder (a symlink "
            "to '/etc' is in its place now); the Run counts as failed)") in result.out
    assert Path("/etc/passwd").is_file()


def test_ctrl_c_ends_a_running_bash_command_at_once(tmp_path) -> None:
    import signal
    import subprocess

    from tests.helpers import SMEVALS
    from tests.helpers.waiting import wait_for

    marker = "987653.5"
    ev = agent_eval(tmp_path, CONFIG.replace("max_turns: 3", "tool_timeout: 900"))
    session = [{"tool_calls": [{"name": "bash", "arguments": {"command": f"sleep {marker}"}}]},
               {"content": "done"}]
    path = ev / "configs" / "sessions" / "good" / "job.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in session))
    proc = subprocess.Popen([SMEVALS, "run", str(ev), "-m", "good", "--store",
                             str(tmp_path / "store")], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: sleepers(marker), "the agent's sleep command")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)     # the command would sleep for days
    finally:
        proc.kill()
    assert proc.returncode == 130, out + err
    assert "Interrupted" in err
    wait_for(lambda: not sleepers(marker), "the sleep command to be killed")


def sleepers(marker: str) -> list[str]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes() == f"sleep\0{marker}\0".encode():
                found.append(pid)
        except OSError:
            pass
    return found


def test_run_against_an_openai_compatible_server(tmp_path, fake_openai) -> None:
    from tools.fake_openai import completion

    fake_openai.enqueue(200, completion(None, tool_calls=[{"id": "w", "function": {
        "name": "write_file", "arguments": '{"path": "done.txt", "content": "yes"}'}}],
        usage={"prompt_tokens": 30, "completion_tokens": 9}, finish_reason="tool_calls"))
    fake_openai.reply("done", usage={"prompt_tokens": 50, "completion_tokens": 2})
    ev = agent_eval(tmp_path, f"runner: smevals:agent\nmodel: tiny\nbase_url: "
                              f"{fake_openai.base_url}\nretries: 0\n")
    store = tmp_path / "store"
    result = run_cli("run", str(ev), "--store", str(store))
    assert result.code == 0, result.both
    [run] = (store / "ev" / "runs" / "job" / "default" / "tiny").iterdir()
    record = json.loads((run / "run.json").read_text())
    assert (record["usage"]["input_tokens"], record["usage"]["output_tokens"]) == (80, 11)
    assert (run / "done.txt").read_text() == "yes"
    assert (run / "output.txt").read_text() == "done"
    assert fake_openai.requests[1].body["messages"][-1] == {
        "role": "tool", "tool_call_id": "w", "content": "wrote 3 bytes to done.txt"}


def test_the_agent_works_on_a_tasks_starting_files(tmp_path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"job": "prompt: Fix app.py.\nworkspace: start\n"},
                   configs={"default": CONFIG}, graders={"default": GRADER},
                   files={"start/app.py": "print('helo')\n", "start/notes.txt": "keep\n"})
    session = [
        {"tool_calls": [{"name": "list_files", "arguments": {}},
                        {"name": "read_file", "arguments": {"path": "app.py"}}]},
        {"tool_calls": [{"name": "write_file",
                         "arguments": {"path": "app.py", "content": "print('hello')\n"}}]},
        {"content": "fixed"}]
    path = ev / "configs" / "sessions" / "good" / "job.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in session))
    store = tmp_path / "store"
    result = run_cli("run", str(ev), "-m", "good", "--store", str(store))
    assert result.code == 0, result.both
    [run] = (store / "ev" / "runs" / "job" / "default" / "good").iterdir()
    assert sorted(p.name for p in run.iterdir()) == [
        "app.py", "output.txt", "run.json", "transcript.jsonl", "workspace.diff"]
    assert "-print('helo')\n+print('hello')\n" in (run / "workspace.diff").read_text()
    results = [json.loads(line) for line in (run / "transcript.jsonl").open()
               if json.loads(line)["type"] == "tool_result"]
    assert [r["output"] for r in results[:2]] == ["app.py\nnotes.txt", "print('helo')\n"]
