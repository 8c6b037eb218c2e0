"""smevals:agent, the built-in agent: its loop on recorded sessions (replay backend) and on a
scripted OpenAI-compatible server, its limits, its transcript and usage (its tools:
test_agent_tools.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from smevals.runners import config_problems, run_builtin
from tests.helpers.agent import (
    REPLAY,
    TASK,
    agent,
    answer,
    call,
    entries,
    record,
    results,
    timeless,
    tools,
)
from tools.fake_openai import Received, Scripted, completion


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
         "output": "hi\n[exited with code 3]", "is_error": True, "exit_code": 3, "turn": 1},
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


@pytest.mark.parametrize(("lines", "problem"), [
    (["{not json"], "sessions/m1/t1.jsonl:1: invalid JSON: "),
    ([json.dumps(answer("x")), "[1]"], "sessions/m1/t1.jsonl:2: expected a JSON object, got "
                                        "list"),
    ([json.dumps({"content": 3})], "sessions/m1/t1.jsonl:1: 'content' must be a string or "
                                   "null, not integer"),
    ([json.dumps({"tool_calls": [{"arguments": {}}]})],
     "sessions/m1/t1.jsonl:1: tool_calls[0] has no name"),
    ([json.dumps({"content": "x", "usage": {"input_tokens": -1, "cost_usd": 0.1}})],
     "sessions/m1/t1.jsonl:1: 'usage.input_tokens' must be a count of tokens, not -1"),
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
    assert config_problems("agent", {**REPLAY, "base_url": "http://x", "retries": None}) == [
        ("base_url", "only for backend: openai (the default)")]
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


def test_long_arguments_are_cut_in_usage_and_kept_whole_in_the_transcript(tmp_path,
                                                                           make_ctx) -> None:
    content = "x" * 5000
    record(tmp_path, [tools(call("write_file", {"path": "big.txt", "content": content})),
                      answer("ok")])
    outcome, workspace = agent(make_ctx)
    assert outcome.usage is not None
    [used] = outcome.usage["tool_calls"]
    assert used["arguments"] == {"path": "big.txt",
                                 "content": "x" * 2000 + "[... 3000 more characters]"}
    assert entries(workspace)[2]["arguments"]["content"] == content
    assert (workspace / "big.txt").read_text() == content


def test_the_threat_table_of_the_agent_names_tests_that_exist() -> None:
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    page = (root / "docs" / "agents.md").read_text()
    table = page[page.index("### What a hostile model meets"):page.index("### Recorded sess")]
    named = set(re.findall(r"`(test_\w+)`", table))
    source = "".join(p.read_text() for p in (root / "tests" / "runners").glob("test_agent*.py"))
    assert len(named) >= 15
    assert sorted(n for n in named if f"def {n}(" not in source) == []
