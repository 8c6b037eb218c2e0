"""smevals:openai against a fake OpenAI-compatible server."""

from __future__ import annotations

import json
import socket
import threading
from typing import Any

import pytest

from smevals.runners import BuiltinOutcome, config_problems, run_builtin
from tools.fake_openai import FakeOpenAI, completion

FAST = {"base": 0.001, "cap": 0.01}
PROMPT_TASK = {"name": "t1", "prompt": "Say hi."}


def config(server: FakeOpenAI, **extra: Any) -> dict[str, Any]:
    return {"runner": "smevals:openai", "base_url": server.base_url, "backoff": FAST, **extra}


def run(make_ctx: Any, cfg: dict[str, Any], task: dict[str, Any] = PROMPT_TASK,
        **overrides: Any) -> BuiltinOutcome:
    return run_builtin("openai", make_ctx(cfg, task, **overrides))


def without_latency(usage: dict[str, Any] | None) -> dict[str, Any]:
    assert usage is not None
    latency = usage.pop("latency_ms")
    assert isinstance(latency, float) and latency >= 0
    return usage


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_request_body_and_path(fake_openai, make_ctx) -> None:
    fake_openai.reply("Hi!")
    cfg = config(fake_openai, model="cfg-model", system="Be brief.", temperature=0.2,
                 max_tokens=64, params={"top_p": 0.9, "seed": 7, "temperature": 0.0})
    outcome = run(make_ctx, cfg, model="run-model")
    assert (outcome.stdout, outcome.exit_code, outcome.failure, outcome.stderr) == (
        "Hi!", 0, None, "")
    [request] = fake_openai.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.body == {
        "model": "run-model",
        "messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "Say hi."}],
        "temperature": 0.0,
        "max_tokens": 64,
        "top_p": 0.9,
        "seed": 7,
    }
    assert request.headers["content-type"] == "application/json"
    assert request.headers["user-agent"].startswith("smevals/")


def test_minimal_body(fake_openai, make_ctx) -> None:
    fake_openai.reply("x")
    run(make_ctx, config(fake_openai))
    assert fake_openai.requests[0].body == {
        "model": "m1", "messages": [{"role": "user", "content": "Say hi."}],
    }


@pytest.mark.parametrize(("cfg", "environ", "expected"), [
    ({}, {}, None),
    ({}, {"OPENAI_API_KEY": ""}, None),
    ({}, {"OPENAI_API_KEY": "sk-test-123"}, "Bearer sk-test-123"),
    ({"api_key_env": "GROQ_KEY"}, {"OPENAI_API_KEY": "sk-other", "GROQ_KEY": "gk-1"},
     "Bearer gk-1"),
    ({"api_key_env": "GROQ_KEY"}, {"OPENAI_API_KEY": "sk-other"}, None),
])
def test_authorization_only_with_a_key(fake_openai, make_ctx, cfg, environ, expected) -> None:
    fake_openai.reply("x")
    outcome = run(make_ctx, config(fake_openai, **cfg), environ=environ)
    assert outcome.exit_code == 0
    assert fake_openai.requests[0].headers.get("authorization") == expected


def test_extra_headers_and_query_in_base_url(fake_openai, make_ctx) -> None:
    fake_openai.reply("x")
    cfg = config(fake_openai, headers={"api-key": "azure", "authorization": "Token t"})
    cfg["base_url"] = fake_openai.base_url + "/?api-version=2024-06-01"
    run(make_ctx, cfg, environ={"OPENAI_API_KEY": "sk-test"})
    [request] = fake_openai.requests
    assert request.path == "/v1/chat/completions?api-version=2024-06-01"
    assert request.headers["api-key"] == "azure"
    assert request.headers["authorization"] == "Token t"


def test_messages_task(fake_openai, make_ctx) -> None:
    fake_openai.reply("4")
    messages = [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"},
                {"role": "user", "content": "Again?"}]
    run(make_ctx, config(fake_openai, system="S"), {"name": "t", "messages": messages})
    assert fake_openai.requests[0].body["messages"] == [{"role": "system", "content": "S"},
                                                         *messages]


def test_task_system_message_wins_over_config_system(fake_openai, make_ctx) -> None:
    fake_openai.reply("ok")
    messages = [{"role": "system", "content": "Task system"}, {"role": "user", "content": "q"}]
    run(make_ctx, config(fake_openai, system="Config system"), {"name": "t", "messages": messages})
    assert fake_openai.requests[0].body["messages"] == messages


@pytest.mark.parametrize(("task", "reason"), [
    ({"name": "t"}, "task 't' needs a string `prompt` or `messages`"),
    ({"name": "t", "prompt": "a", "messages": []}, "task 't' has both `prompt` and `messages`"),
    ({"name": "t", "messages": []}, "task 't': `messages` must be a non-empty list"),
    ({"name": "t", "messages": [{"content": "x"}]}, "task 't': messages[0] needs a string `role`"),
])
def test_bad_task_fails_at_launch(fake_openai, make_ctx, task, reason) -> None:
    outcome = run(make_ctx, config(fake_openai), task)
    assert outcome == BuiltinOutcome(stdout="", stderr=f"smevals:openai: {reason}\n",
                                     exit_code=1, failure="launch")
    assert fake_openai.requests == []


def test_usage_latency_status_model_recorded(fake_openai, make_ctx) -> None:
    fake_openai.reply("Hello", model="served-model-2",
                      usage={"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15})
    outcome = run(make_ctx, config(fake_openai))
    assert without_latency(outcome.usage) == {
        "input_tokens": 12, "output_tokens": 3, "total_tokens": 15,
        "http_status": 200, "model": "served-model-2", "finish_reason": "stop",
    }


def test_total_tokens_computed_when_missing(fake_openai, make_ctx) -> None:
    fake_openai.reply("x", usage={"prompt_tokens": 2, "completion_tokens": 5})
    usage = without_latency(run(make_ctx, config(fake_openai)).usage)
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (2, 5, 7)


def test_tool_calls_recorded(fake_openai, make_ctx) -> None:
    calls = [
        {"id": "call_1", "type": "function",
         "function": {"name": "get_weather", "arguments": '{"city": "Oslo", "days": 2}'}},
        {"id": "call_2", "type": "function",
         "function": {"name": "search", "arguments": "not json"}},
    ]
    fake_openai.reply(None, tool_calls=calls, finish_reason="tool_calls")
    outcome = run(make_ctx, config(fake_openai))
    assert outcome.stdout == ""
    assert outcome.exit_code == 0
    assert outcome.usage is not None
    assert outcome.usage["tool_calls"] == [
        {"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}, "id": "call_1"},
        {"name": "search", "arguments": "not json", "id": "call_2"},
    ]
    assert outcome.usage["finish_reason"] == "tool_calls"


def test_429_then_200_is_retried(fake_openai, make_ctx) -> None:
    fake_openai.enqueue(429, {"error": {"message": "rate limited"}})
    fake_openai.reply("finally")
    outcome = run(make_ctx, config(fake_openai))
    assert (outcome.stdout, outcome.exit_code, outcome.failure) == ("finally", 0, None)
    assert outcome.stderr == (
        'smevals:openai: attempt 1/5: HTTP 429: {"error": {"message": "rate limited"}}; '
        "retrying in 0.00 s\n"
    )
    assert len(fake_openai.requests) == 2
    assert fake_openai.requests[0].raw == fake_openai.requests[1].raw


def test_retry_after_is_honoured_up_to_the_cap(fake_openai, make_ctx) -> None:
    fake_openai.enqueue(503, "busy", headers={"Retry-After": "0.15"})
    fake_openai.enqueue(503, "busy", headers={"Retry-After": "60"})
    fake_openai.enqueue(503, "busy", headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})
    fake_openai.reply("ok")
    outcome = run(make_ctx, config(fake_openai, backoff={"base": 0.001, "cap": 0.25}))
    assert outcome.stdout == "ok"
    assert outcome.stderr == (
        "smevals:openai: attempt 1/5: HTTP 503: busy; retrying in 0.15 s\n"
        "smevals:openai: attempt 2/5: HTTP 503: busy; retrying in 0.25 s\n"
        "smevals:openai: attempt 3/5: HTTP 503: busy; retrying in 0.00 s\n"
    )


def test_exponential_backoff_delays(fake_openai, make_ctx) -> None:
    for _ in range(4):
        fake_openai.enqueue(502, "")
    fake_openai.reply("ok")
    outcome = run(make_ctx, config(fake_openai, backoff={"base": 0.01, "cap": 0.05}))
    delays = [line.rsplit(" ", 2)[1] for line in outcome.stderr.splitlines()]
    assert delays == ["0.01", "0.02", "0.04", "0.05"]
    assert outcome.stderr.splitlines()[0] == (
        "smevals:openai: attempt 1/5: HTTP 502: (empty body); retrying in 0.01 s")


def test_500_every_time_fails_after_the_retries(fake_openai, make_ctx) -> None:
    for _ in range(3):
        fake_openai.enqueue(500, {"error": "oops"})
    outcome = run(make_ctx, config(fake_openai, retries=2))
    assert len(fake_openai.requests) == 3
    assert (outcome.stdout, outcome.exit_code, outcome.failure) == ("", 1, "exit")
    assert outcome.usage == {"http_status": 500}
    assert outcome.stderr == (
        'smevals:openai: attempt 1/3: HTTP 500: {"error": "oops"}; retrying in 0.00 s\n'
        'smevals:openai: attempt 2/3: HTTP 500: {"error": "oops"}; retrying in 0.00 s\n'
        'smevals:openai: HTTP 500: {"error": "oops"} (gave up after 3 attempts)\n'
    )


def test_400_is_not_retried(fake_openai, make_ctx) -> None:
    fake_openai.enqueue(400, {"error": {"message": "bad model"}})
    outcome = run(make_ctx, config(fake_openai))
    assert len(fake_openai.requests) == 1
    assert outcome == BuiltinOutcome(
        stdout="",
        stderr=f"smevals:openai: HTTP 400 from {fake_openai.base_url}/chat/completions: "
               '{"error": {"message": "bad model"}}\n',
        exit_code=1,
        usage={"http_status": 400},
        failure="exit",
    )


def test_error_body_is_truncated_and_the_key_redacted(fake_openai, make_ctx) -> None:
    fake_openai.enqueue(401, "Incorrect API key provided: sk-secret-value. " + "x" * 1000)
    outcome = run(make_ctx, config(fake_openai), environ={"OPENAI_API_KEY": "sk-secret-value"})
    assert "sk-secret-value" not in outcome.stderr
    shown = outcome.stderr.partition("/chat/completions: ")[2]
    assert shown.startswith("Incorrect API key provided: [redacted]. xxx")
    assert shown.endswith("x... (1045 bytes)\n")
    assert len(shown) == 300 + len("... (1045 bytes)\n")


@pytest.mark.parametrize(("body", "reason"), [
    (b"<html>oops</html>", "not JSON (*: line 1 column 1 (char 0))"),
    (b"[]", "expected a JSON object, got list"),
    (b'{"error": "overloaded"}', "no `choices`"),
    (b'{"choices": [{"text": "legacy"}]}', "`choices[0].message` is not an object"),
    (b'{"choices": [{"message": {"content": 5}}]}',
     "`content` must be a string or a list, not integer"),
])
def test_malformed_body_fails(fake_openai, make_ctx, body, reason) -> None:
    fake_openai.enqueue(200, body)
    outcome = run(make_ctx, config(fake_openai))
    assert len(fake_openai.requests) == 1
    assert (outcome.stdout, outcome.exit_code, outcome.failure) == ("", 1, "exit")
    expected = (f"smevals:openai: malformed response body (HTTP 200): {reason}; "
                f"body: {body.decode()}\n")
    head, star, tail = expected.partition("*")  # "*": orjson's wording, which may change
    if star:
        assert outcome.stderr.startswith(head) and outcome.stderr.endswith(tail)
    else:
        assert outcome.stderr == expected
    assert without_latency(outcome.usage) == {"http_status": 200}


def test_the_last_response_body_is_kept_in_the_workspace(fake_openai, make_ctx) -> None:
    fake_openai.reply("kept")
    ctx = make_ctx(config(fake_openai), PROMPT_TASK)
    run_builtin("openai", ctx)
    kept = (ctx.workspace / "openai-response.json").read_bytes()
    assert kept == json.dumps(completion("kept")).encode()


def test_connection_refused_fails(make_ctx) -> None:
    port = closed_port()
    cfg = {"runner": "smevals:openai", "base_url": f"http://127.0.0.1:{port}/v1",
           "backoff": FAST}
    outcome = run(make_ctx, cfg)
    assert outcome == BuiltinOutcome(
        stdout="",
        stderr=f"smevals:openai: connection refused by 127.0.0.1:{port} "
               "(is the server running?)\n",
        exit_code=1,
        failure="exit",
    )


def test_dropped_connection_is_retried(fake_openai, make_ctx) -> None:
    fake_openai.enqueue(drop=True)
    fake_openai.reply("after the drop")
    outcome = run(make_ctx, config(fake_openai))
    assert outcome.stdout == "after the drop"
    assert outcome.stderr == (
        "smevals:openai: attempt 1/5: connection lost (RemoteDisconnected: Remote end closed "
        "connection without response); retrying in 0.00 s\n"
    )


def test_overall_timeout_aborts_a_slow_request(fake_openai, make_ctx) -> None:
    fake_openai.enqueue(200, completion("too late"), delay=10)
    outcome = run(make_ctx, config(fake_openai), timeout=0.3)
    # stuck behind the 10 s delay, it would end with the late answer or more attempts
    assert len(fake_openai.requests) == 1
    assert outcome == BuiltinOutcome(
        stdout="",
        stderr="smevals:openai: timed out after 0.3 s waiting for "
               f"{fake_openai.base_url}/chat/completions\n",
        exit_code=1,
        failure="timeout",
    )


def test_timeout_leaves_no_time_for_backoff(fake_openai, make_ctx) -> None:
    fake_openai.enqueue(429, "slow down", headers={"Retry-After": "5"})
    outcome = run(make_ctx, config(fake_openai, backoff={"base": 1, "cap": 8}), timeout=2)
    assert len(fake_openai.requests) == 1
    assert (outcome.exit_code, outcome.failure) == (1, "timeout")
    assert outcome.stderr == (
        "smevals:openai: timed out after 2 s (no time left to retry after: HTTP 429: slow down)\n"
    )


def test_request_timeout(fake_openai, make_ctx) -> None:
    fake_openai.enqueue(200, completion("too late"), delay=10)
    outcome = run(make_ctx, config(fake_openai, request_timeout=0.2), timeout=30)
    # stuck behind the 10 s delay, it would end with the late answer or more attempts
    assert len(fake_openai.requests) == 1
    assert (outcome.exit_code, outcome.failure) == (1, "timeout")
    assert outcome.stderr == (
        f"smevals:openai: no response from {fake_openai.base_url}/chat/completions "
        "within request_timeout 0.2 s\n"
    )


def test_cancel_during_a_request(fake_openai, make_ctx) -> None:
    fake_openai.enqueue(200, completion("too late"), delay=10)
    ctx = make_ctx(config(fake_openai), PROMPT_TASK)
    threading.Timer(0.2, ctx.cancel.set).start()
    outcome = run_builtin("openai", ctx)
    # stuck behind the 10 s delay, it would end with the late answer or more attempts
    assert len(fake_openai.requests) == 1
    assert outcome == BuiltinOutcome(stdout="", stderr="smevals:openai: cancelled\n",
                                     exit_code=130, failure="exit")


def test_cancel_during_backoff(fake_openai, make_ctx) -> None:
    fake_openai.enqueue(503, "busy")
    ctx = make_ctx(config(fake_openai, backoff={"base": 10, "cap": 10}), PROMPT_TASK)
    threading.Timer(0.2, ctx.cancel.set).start()
    outcome = run_builtin("openai", ctx)
    # stuck behind the 10 s delay, it would end with the late answer or more attempts
    assert len(fake_openai.requests) == 1
    assert len(fake_openai.requests) == 1
    assert outcome.stderr == (
        "smevals:openai: attempt 1/5: HTTP 503: busy; retrying in 10.00 s\n"
        "smevals:openai: cancelled\n"
    )
    assert (outcome.exit_code, outcome.failure) == (130, "exit")


def test_cancelled_before_start_sends_nothing(fake_openai, make_ctx) -> None:
    ctx = make_ctx(config(fake_openai), PROMPT_TASK)
    ctx.cancel.set()
    assert run_builtin("openai", ctx).stderr == "smevals:openai: cancelled\n"
    assert fake_openai.requests == []


def test_config_problems_openai() -> None:
    good = {"name": "c", "runner": "smevals:openai", "model": "llama3", "timeout": 60,
            "base_url": "http://localhost:11434/v1", "api_key_env": "OLLAMA_KEY",
            "system": "Be brief.", "temperature": 0, "max_tokens": 256,
            "params": {"top_p": 0.5}, "headers": {"X-Team": "evals"}, "retries": 0,
            "request_timeout": 30, "backoff": {"base": 0.1, "cap": 1}, "description": None}
    assert config_problems("openai", good) == []
    assert config_problems("openai", {"runner": "smevals:openai"}) == []
    bad = {
        "base_url": "localhost:8080", "api_key_env": "MY KEY", "temperature": "hot",
        "max_tokens": 0, "params": {"model": "x", "stream": True}, "headers": {"X": 1},
        "retries": 1.5, "request_timeout": 0, "backoff": {"base": -1}, "sytem": "typo",
        "system": ["a"],
    }
    assert config_problems("openai", bad) == [
        ("base_url", "must be an http:// or https:// URL, not 'localhost:8080'"),
        ("api_key_env", "is not an environment variable name: 'MY KEY'"),
        ("temperature", "must be a number, not string"),
        ("max_tokens", "must be > 0, not 0"),
        ("params.model", "must not be set (smevals sets it)"),
        ("params.stream", "must not be set (smevals sets it)"),
        ("headers.X", "must be a string, not integer"),
        ("retries", "must be an integer, not number"),
        ("request_timeout", "must be > 0, not 0"),
        ("backoff.base", "must be >= 0, not -1"),
        ("sytem", "unknown key for smevals:openai; did you mean 'system'? known keys: "
                  "api_key_env, backoff, base_url, description, headers, max_tokens, model, "
                  "name, params, prompt_template, request_timeout, retries, runner, system, "
                  "temperature, timeout"),
        ("system", "must be a string, not list"),
    ]


def test_config_problems_name_the_field_inside_a_mapping() -> None:
    """The config keys are a JSON Schema: a problem inside a mapping names its own field."""
    bad = {"headers": {"A B": "x", "C": "a\nb", 1: "x"},
           "backoff": {"x": 1, "cap": float("nan")}, "params": {2: 3},
           "temperature": float("inf"), "retries": float("inf")}
    assert config_problems("openai", bad) == [
        ("headers", "keys must be strings"),
        ("headers", "bad header name 'A B'"),
        ("headers.C", "must be a one-line string"),
        ("backoff.x", "unknown key (known: base, cap)"),
        ("backoff.cap", "must be finite, not nan"),
        ("params", "keys must be strings"),
        ("temperature", "must be finite, not inf"),
        ("retries", "must be an integer, not number"),
    ]
    assert config_problems("llm", {"options": [1], "api_key_env": " ", "system": None}) == [
        ("options", "must be a mapping, not list"), ("api_key_env", "must not be empty")]


def test_an_integral_float_is_an_integer(fake_openai, make_ctx) -> None:
    """As everywhere in the schemas, 64.0 is an integer; the request carries 64."""
    assert config_problems("openai", {"max_tokens": 64.0, "retries": 1.0}) == []
    fake_openai.reply("x")
    assert run(make_ctx, config(fake_openai, max_tokens=64.0, retries=1.0)).exit_code == 0
    sent = fake_openai.requests[0].body["max_tokens"]
    assert (sent, type(sent)) == (64, int)


def test_config_problems_base_url() -> None:
    assert config_problems("openai", {"base_url": "http://h/v1/chat/completions/"}) == [
        ("base_url", "must stop before /chat/completions (smevals appends it)"),
    ]
    assert config_problems("openai", {"base_url": "http://h:99999/v1"}) == [
        ("base_url", "has a bad port: 'http://h:99999/v1'"),
    ]
    assert config_problems("openai", {"base_url": ""}) == [("base_url", "must not be empty")]


def test_bad_config_fails_the_run_at_launch(make_ctx) -> None:
    outcome = run(make_ctx, {"runner": "smevals:openai", "retries": -1})
    assert outcome == BuiltinOutcome(
        stdout="", stderr="smevals:openai: bad config: retries: must be >= 0, not -1\n",
        exit_code=1, failure="launch")


def test_no_model_fails_at_launch(fake_openai, make_ctx) -> None:
    outcome = run(make_ctx, config(fake_openai), model="")
    assert outcome.stderr == "smevals:openai: no model: set `model:` in the config or pass -m\n"
    assert outcome.failure == "launch"
