"""smevals:agent, the built-in agent: its loop on recorded sessions (replay backend) and on a
scripted OpenAI-compatible server, its confined tools, its limits, its transcript and usage."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from smevals.runners import BuiltinOutcome, config_problems, run_builtin
from smevals.store import transcript
from tools.fake_openai import Received, Scripted, completion

REPLAY = {"runner": "smevals:agent", "backend": "replay", "sessions": "sessions"}
TASK = {"name": "t1", "prompt": "Make hello.txt say hi."}


def record(root: Path, responses: Sequence[dict[str, Any] | str], model: str = "m1",
           task: str = "t1") -> Path:
    """A recorded session: one response of the model per line."""
    path = root / "sessions" / model / f"{task}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in responses]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def call(name: str, arguments: Any, ident: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"name": name, "arguments": arguments}
    if ident:
        item["id"] = ident
    return item


def tools(*calls: dict[str, Any], text: str | None = None, tokens: int = 0) -> dict[str, Any]:
    """A response calling tools."""
    response: dict[str, Any] = {"content": text, "tool_calls": list(calls)}
    if tokens:
        response["usage"] = {"input_tokens": tokens, "output_tokens": 1}
    return response


def answer(text: str) -> dict[str, Any]:
    return {"content": text, "usage": {"input_tokens": 5, "output_tokens": 2}}


def entries(workspace: Path) -> list[dict[str, Any]]:
    """The Run's transcript without its timings."""
    found = list(transcript.parse((workspace / transcript.NAME).read_bytes()))
    return [{k: v for k, v in e.items() if k != "t"} for e in found]


def results(workspace: Path) -> list[tuple[str, str, bool]]:
    return [(e["name"], e["output"], e["is_error"]) for e in entries(workspace)
            if e["type"] == "tool_result"]


def timeless(usage: dict[str, Any] | None) -> dict[str, Any]:
    assert usage is not None
    rest = dict(usage)
    for key in ("latency_ms", "duration_ms"):
        assert isinstance(rest.pop(key), float)
    return rest


def agent(make_ctx: Any, config: dict[str, Any] | None = None, **overrides: Any
          ) -> tuple[BuiltinOutcome, Path]:
    ctx = make_ctx({**REPLAY, **(config or {})}, overrides.pop("task", TASK), **overrides)
    return run_builtin("agent", ctx), ctx.workspace


def test_good_session_exact_transcript_usage_and_files(tmp_path, make_ctx) -> None:
    record(tmp_path, [
        tools(call("write_file", {"path": "src/hello.txt", "content": "hi\n"}, "w1"),
              text="Writing it.", tokens=100),
        tools(call("bash", {"command": "cat src/hello.txt; exit 3"}), tokens=120),
        answer("Done: src/hello.txt says hi."),
    ])
    outcome, workspace = agent(make_ctx, {"system": "Be an agent."})
    assert (outcome.stdout, outcome.exit_code, outcome.failure, outcome.stderr) == (
        "Done: src/hello.txt says hi.", 0, None, "")
    assert (workspace / "src/hello.txt").read_text() == "hi\n"
    assert entries(workspace) == [
        {"type": "message", "role": "system", "text": "Be an agent."},
        {"type": "message", "role": "user", "text": "Make hello.txt say hi."},
        {"type": "message", "role": "assistant", "text": "Writing it.", "turn": 0},
        {"type": "tool_call", "id": "w1", "name": "write_file",
         "arguments": {"path": "src/hello.txt", "content": "hi\n"}, "turn": 0},
        {"type": "tool_result", "id": "w1", "name": "write_file",
         "output": "wrote 3 bytes to src/hello.txt", "is_error": False, "turn": 0},
        {"type": "tool_call", "id": "call_1_0", "name": "bash",
         "arguments": {"command": "cat src/hello.txt; exit 3"}, "turn": 1},
        {"type": "tool_result", "id": "call_1_0", "name": "bash",
         "output": "hi\n[exit code 3]", "is_error": True, "exit_code": 3, "turn": 1},
        {"type": "message", "role": "assistant", "text": "Done: src/hello.txt says hi.",
         "turn": 2},
    ]
    usage = timeless(outcome.usage)
    assert usage.pop("sandbox") != ""
    assert usage == {
        "input_tokens": 225, "output_tokens": 4, "total_tokens": 229, "turns": 3,
        "tool_errors": 1,
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": "src/hello.txt", "content": "hi\n"},
             "id": "w1"},
            {"name": "bash", "arguments": {"command": "cat src/hello.txt; exit 3"},
             "id": "call_1_0"}]}


def test_bad_calls_go_back_to_the_model_as_errors(tmp_path, make_ctx) -> None:
    record(tmp_path, [
        tools(call("read_file", {"path": "missing.txt"}),
              call("launch_rockets", {}),
              call("bash", '{"command": "ls"'),
              call("write_file", {"path": "a.txt"}),
              call("write_file", ["a.txt", "x"]),
              call("bash", {"command": "  "})),
        answer("I give up."),
    ])
    outcome, workspace = agent(make_ctx)
    assert (outcome.stdout, outcome.exit_code) == ("I give up.", 0)
    assert results(workspace) == [
        ("read_file", "no such file: missing.txt", True),
        ("launch_rockets", "unknown tool 'launch_rockets'; the tools are: bash, read_file, "
                           "write_file, list_files", True),
        ("bash", "the arguments of bash are not valid JSON: '{\"command\": \"ls\"'", True),
        ("write_file", "missing argument `content`", True),
        ("write_file", "the arguments of write_file must be a JSON object", True),
        ("bash", "`command` must be a non-empty string", True),
    ]
    assert outcome.usage is not None and outcome.usage["tool_errors"] == 6
    assert entries(workspace)[6]["arguments"] == '{"command": "ls"'   # kept as it came


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


def test_turn_limit_fails_the_run_with_transcript(tmp_path, make_ctx) -> None:
    record(tmp_path, [tools(call("list_files", {}))] * 5)
    outcome, workspace = agent(make_ctx, {"max_turns": 3})
    assert (outcome.stdout, outcome.exit_code, outcome.failure) == ("", 1, "exit")
    assert outcome.stderr == ("smevals:agent: turn limit: the model was still calling tools "
                              "after max_turns 3\n")
    found = entries(workspace)
    assert [e["type"] for e in found].count("tool_call") == 3
    assert found[-1] == {"type": "error", "message": "turn limit: the model was still "
                                                     "calling tools after max_turns 3"}
    assert outcome.usage is not None and outcome.usage["turns"] == 3


def test_a_session_that_never_stops_calling_tools(tmp_path, make_ctx) -> None:
    record(tmp_path, [tools(call("list_files", {}))] * 2)
    outcome, workspace = agent(make_ctx)
    assert outcome.failure == "exit"
    assert outcome.stderr == ("smevals:agent: the recorded session sessions/m1/t1.jsonl "
                              "ended after 2 responses, all of them calling tools\n")
    assert entries(workspace)[-1]["type"] == "error"


def test_token_limit(tmp_path, make_ctx) -> None:
    record(tmp_path, [tools(call("list_files", {}), tokens=60)] * 3 + [answer("done")])
    outcome, _ = agent(make_ctx, {"max_tokens": 100})
    assert outcome.stderr == ("smevals:agent: token limit: 122 tokens used, above max_tokens "
                              "100\n")
    assert outcome.usage is not None and outcome.usage["total_tokens"] == 122


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
    assert output.startswith("[timed out after 1 s: every process of the command killed]")
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


def test_bash_sees_no_secret_and_a_private_home(tmp_path, make_ctx) -> None:
    record(tmp_path, [tools(call("bash", {"command": "env | sort | grep -v '^_='"})),
                      answer("ok")])
    environ = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "MY_API_KEY": "s3cret"}
    outcome, workspace = agent(make_ctx, environ=environ)
    [(_name, output, _error)] = results(workspace)
    assert "s3cret" not in output and "MY_API_KEY" not in output
    home = [line for line in output.splitlines() if line.startswith("HOME=")]
    assert home and "smevals-agent-home-" in home[0]
    assert not Path(home[0][5:]).exists()          # removed after the Run


def test_only_the_tools_the_config_names(tmp_path, make_ctx) -> None:
    record(tmp_path, [tools(call("bash", {"command": "ls"})), answer("ok")])
    outcome, workspace = agent(make_ctx, {"tools": ["read_file", "list_files"]})
    assert results(workspace) == [
        ("bash", "unknown tool 'bash'; the tools are: read_file, list_files", True)]
    assert outcome.usage is not None and "sandbox" not in outcome.usage


@pytest.mark.parametrize(("lines", "problem"), [
    (["{not json"], "sessions/m1/t1.jsonl:1: invalid JSON: "),
    ([json.dumps(answer("x")), "[1]"], "sessions/m1/t1.jsonl:2: expected a JSON object, got "
                                        "list"),
    ([json.dumps({"content": 3})], "sessions/m1/t1.jsonl:1: 'content' must be a string or "
                                   "null, not integer"),
    ([json.dumps({"tool_calls": [{"arguments": {}}]})],
     "sessions/m1/t1.jsonl:1: tool_calls[0] has no name"),
    ([""], "the recorded session sessions/m1/t1.jsonl is empty"),
])
def test_malformed_session_fails_at_launch(tmp_path, make_ctx, lines, problem) -> None:
    record(tmp_path, lines)
    outcome, _ = agent(make_ctx)
    assert (outcome.exit_code, outcome.failure) == (1, "launch")
    assert outcome.stderr.startswith(f"smevals:agent: {problem}")


def test_missing_session_names_it(tmp_path, make_ctx) -> None:
    outcome, _ = agent(make_ctx, model="m9")
    assert outcome.stderr == ("smevals:agent: no recorded session sessions/m9/t1.jsonl for "
                              "this model and task\n")
    assert outcome.failure == "exit"


def test_config_problems() -> None:
    assert config_problems("agent", REPLAY) == []
    assert config_problems("agent", {"runner": "smevals:agent", "backend": "replay"}) == [
        ("sessions", "required by smevals:agent with backend: replay")]
    assert config_problems("agent", {"runner": "smevals:agent", "sessions": "s"}) == [
        ("sessions", "only for backend: replay")]
    bad = {**REPLAY, "max_turns": 0, "tools": ["bash", "rm"], "backend": "ollama",
           "params": {"tools": []}, "max_turn": 3}
    assert config_problems("agent", bad) == [
        ("backend", "'ollama' is not one of ['openai', 'replay']"),
        ("max_turns", "must be >= 1, not 0"),
        ("tools.1", "'rm' is not one of ['bash', 'read_file', 'write_file', 'list_files']"),
        ("params.tools", "must not be set (smevals sets it)"),
        ("max_turn", "unknown key for smevals:agent; did you mean 'max_turns'? known keys: "
                     "api_key_env, backend, base_url, description, headers, max_tokens, "
                     "max_tool_output, max_turns, model, name, params, prompt_template, "
                     "request_timeout, retries, runner, sandbox, sessions, system, "
                     "temperature, timeout, tool_timeout, tools"),
    ]


# --- the openai backend, on a scripted server ---


def openai_config(server: Any, **extra: Any) -> dict[str, Any]:
    return {"runner": "smevals:agent", "base_url": server.base_url, **extra}


def test_openai_backend_sends_tools_and_results(fake_openai, make_ctx) -> None:
    fake_openai.enqueue(200, completion(None, tool_calls=[
        {"id": "c1", "type": "function",
         "function": {"name": "write_file", "arguments": '{"path": "a.txt", "content": "A"}'}}],
        finish_reason="tool_calls", usage={"prompt_tokens": 10, "completion_tokens": 3}))
    fake_openai.reply("All done.", usage={"prompt_tokens": 20, "completion_tokens": 2})
    ctx = make_ctx(openai_config(fake_openai, temperature=0), TASK)
    outcome = run_builtin("agent", ctx)
    assert (outcome.stdout, outcome.exit_code, outcome.stderr) == ("All done.", 0, "")
    assert (ctx.workspace / "a.txt").read_text() == "A"
    first, second = (request.body for request in fake_openai.requests)
    assert [t["function"]["name"] for t in first["tools"]] == [
        "bash", "read_file", "write_file", "list_files"]
    assert first["model"] == "m1" and first["temperature"] == 0
    assert second["messages"][2:] == [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {
                "name": "write_file", "arguments": '{"path":"a.txt","content":"A"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "wrote 1 bytes to a.txt"},
    ]
    usage = timeless(outcome.usage)
    assert (usage["input_tokens"], usage["output_tokens"], usage["turns"]) == (30, 5, 2)


def test_openai_model_that_never_stops_calling_tools(fake_openai, make_ctx) -> None:
    def forever(request: Received) -> Scripted:
        turn = len(request.body["messages"])
        return Scripted(body=completion(None, tool_calls=[{"id": f"c{turn}", "function": {
            "name": "list_files", "arguments": "{}"}}], finish_reason="tool_calls"))

    fake_openai.respond_with(forever)
    outcome = run_builtin("agent", make_ctx(openai_config(fake_openai, max_turns=4), TASK))
    assert outcome.failure == "exit"
    assert outcome.stderr == ("smevals:agent: turn limit: the model was still calling tools "
                              "after max_turns 4\n")
    assert len(fake_openai.requests) == 4


def test_openai_malformed_response_fails_the_run(fake_openai, make_ctx) -> None:
    fake_openai.enqueue(200, {"choices": []})
    outcome = run_builtin("agent", make_ctx(openai_config(fake_openai), TASK))
    assert outcome.failure == "exit"
    assert outcome.stderr.startswith("smevals:agent: malformed response body (HTTP 200): "
                                     "no `choices`; body: ")


def test_samples_take_the_session_files_of_a_folder_in_turn(tmp_path, make_ctx) -> None:
    folder = tmp_path / "sessions" / "m1" / "t1"
    folder.mkdir(parents=True)
    for name, text in (("a.jsonl", "first"), ("b.jsonl", "second")):
        (folder / name).write_text(json.dumps(answer(text)) + "\n")
    got = [agent(make_ctx, sample_index=index)[0].stdout for index in range(3)]
    assert got == ["first", "second", "first"]
    (folder / "a.jsonl").unlink()
    (folder / "b.jsonl").unlink()
    outcome, _ = agent(make_ctx)
    assert outcome.stderr == ("smevals:agent: no recorded session in sessions/m1/t1/ for this "
                              "model and task\n")


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
    assert re.fullmatch(r"\d+ more characters not shown\]\n\[stopped: the command printed too "
                        r"much on stdout\]\n\[exit code -\d+\]", notes), notes
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


def test_openai_http_error_ends_the_run_and_keeps_the_transcript(fake_openai, make_ctx
                                                                ) -> None:
    fake_openai.enqueue(200, completion(None, tool_calls=[{"id": "c1", "function": {
        "name": "list_files", "arguments": "{}"}}], finish_reason="tool_calls",
        usage={"prompt_tokens": 7, "completion_tokens": 1}))
    fake_openai.enqueue(400, {"error": {"message": "context too long"}})
    ctx = make_ctx(openai_config(fake_openai), TASK)
    outcome = run_builtin("agent", ctx)
    assert (outcome.exit_code, outcome.failure) == (1, "exit")
    assert outcome.stderr == (f"smevals:agent: HTTP 400 from {fake_openai.base_url}/chat/"
                              'completions: {"error": {"message": "context too long"}}\n')
    found = entries(ctx.workspace)
    assert [e["type"] for e in found] == ["message", "message", "tool_call", "tool_result",
                                          "error"]
    assert timeless(outcome.usage)["input_tokens"] == 7
