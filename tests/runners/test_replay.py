"""smevals:replay: answers Runs from a JSONL file of recorded responses."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from smevals.runners import BuiltinOutcome, builtin_name, config_problems, run_builtin
from smevals.runners import replay as replay_module

CONFIG = {"runner": "smevals:replay", "responses": "responses.jsonl"}


def write_lines(path: Path, items: list[Any]) -> Path:
    lines = [item if isinstance(item, str) else json.dumps(item) for item in items]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def responses(tmp_path: Path) -> Path:
    return write_lines(tmp_path / "responses.jsonl", [
        {"task": "t1", "model": "m1", "output": "first"},
        {"task": "t1", "model": "m2", "output": "other model"},
        {"task": "t1", "model": "m1", "output": "second",
         "usage": {"input_tokens": 3, "output_tokens": 5, "cost_usd": 0.25}},
        {"task": "t2", "model": "m1", "output": "", "exit_code": 2, "stderr": "boom\n"},
    ])


def test_builtin_name() -> None:
    assert builtin_name("smevals:replay") == "replay"
    assert builtin_name("smevals:openai") == "openai"
    assert builtin_name("./my-runner.sh") is None
    assert builtin_name("python") is None


@pytest.mark.parametrize(("index", "output"), [(0, "first"), (1, "second"), (2, "first"),
                                               (3, "second")])
def test_sample_index_picks_sample_modulo_count(responses, make_ctx, index, output) -> None:
    outcome = run_builtin("replay", make_ctx(CONFIG, {"name": "t1"}, sample_index=index))
    assert outcome.stdout == output
    assert outcome.exit_code == 0
    assert outcome.failure is None
    assert outcome.stderr == ""


def test_model_selects_lines(responses, make_ctx) -> None:
    outcome = run_builtin("replay", make_ctx(CONFIG, {"name": "t1"}, model="m2", sample_index=5))
    assert outcome == BuiltinOutcome(stdout="other model")


def test_usage_passthrough(responses, make_ctx) -> None:
    outcome = run_builtin("replay", make_ctx(CONFIG, {"name": "t1"}, sample_index=1))
    assert outcome.usage == {"input_tokens": 3, "output_tokens": 5, "cost_usd": 0.25}
    outcome.usage["input_tokens"] = 99  # the engine may change it: the cache must not see that
    again = run_builtin("replay", make_ctx(CONFIG, {"name": "t1"}, sample_index=1))
    assert again.usage == {"input_tokens": 3, "output_tokens": 5, "cost_usd": 0.25}


def test_no_usage_gives_none(responses, make_ctx) -> None:
    assert run_builtin("replay", make_ctx(CONFIG, {"name": "t1"})).usage is None


def test_recorded_failure_is_replayed(responses, make_ctx) -> None:
    outcome = run_builtin("replay", make_ctx(CONFIG, {"name": "t2"}))
    assert outcome == BuiltinOutcome(stdout="", stderr="boom\n", exit_code=2, failure="exit")


def test_missing_response_names_file_task_model_and_models(responses, make_ctx) -> None:
    outcome = run_builtin("replay", make_ctx(CONFIG, {"name": "t1"}, model="m3"))
    assert outcome.exit_code == 1
    assert outcome.failure == "exit"
    assert outcome.stdout == ""
    assert outcome.stderr == (
        f"smevals:replay: no response for task 't1' and model 'm3' in {responses}; "
        "models recorded for that task: m1, m2\n"
    )


def test_missing_task(responses, make_ctx) -> None:
    outcome = run_builtin("replay", make_ctx(CONFIG, {"name": "nope"}))
    assert outcome.stderr == (
        f"smevals:replay: no response for task 'nope' and model 'm1' in {responses}; "
        "no model has a response for that task\n"
    )


def test_malformed_lines_fail_with_file_and_line(tmp_path, make_ctx) -> None:
    path = write_lines(tmp_path / "responses.jsonl", [
        {"task": "t1", "model": "m1", "output": "fine"},
        "",
        '{"task": "t1", "model": "m1", "output": "unterminated',
        {"task": "t1", "output": "no model"},
        {"task": "t1", "model": "m1", "output": 42},
        ["not", "an", "object"],
        {"task": "t1", "model": "m1", "output": "x", "usage": [1]},
        {"task": "t1", "model": "m1", "output": "x", "exit_code": "1"},
    ])
    outcome = run_builtin("replay", make_ctx(CONFIG, {"name": "t1"}))
    assert (outcome.exit_code, outcome.failure, outcome.stdout) == (1, "launch", "")
    lines = outcome.stderr.splitlines()
    assert lines[0] == "smevals:replay: malformed responses file, 6 bad lines (the first 5 listed):"
    assert lines[1].startswith(f"{path}:3: invalid JSON: ")
    assert lines[2:] == [
        f"{path}:4: missing key 'model'",
        f"{path}:5: 'output' must be a string, not integer",
        f"{path}:6: expected a JSON object, got list",
        f"{path}:7: 'usage' must be an object, not list",
    ]


def test_one_malformed_line(tmp_path, make_ctx) -> None:
    path = write_lines(tmp_path / "responses.jsonl", [
        {"task": "t1", "model": "m1", "output": "fine"},
        {"task": "t1", "model": "m1", "output": "x", "exit_code": "1"},
    ])
    outcome = run_builtin("replay", make_ctx(CONFIG, {"name": "t1"}))
    assert outcome == BuiltinOutcome(
        stdout="",
        stderr="smevals:replay: malformed responses file, 1 bad line:\n"
               f"{path}:2: 'exit_code' must be an integer, not string\n",
        exit_code=1,
        failure="launch",
    )


def test_missing_file(tmp_path, make_ctx) -> None:
    outcome = run_builtin("replay", make_ctx(CONFIG, {"name": "t1"}))
    assert (outcome.exit_code, outcome.failure) == (1, "launch")
    assert outcome.stderr == (
        f"smevals:replay: responses file not found: {tmp_path / 'responses.jsonl'}\n"
    )


def test_relative_path_resolves_against_config_dir(tmp_path, make_ctx) -> None:
    (tmp_path / "data").mkdir()
    write_lines(tmp_path / "data" / "r.jsonl", [{"task": "t", "model": "m1", "output": "hi"}])
    config = {**CONFIG, "responses": "data/r.jsonl"}
    assert run_builtin("replay", make_ctx(config, {"name": "t"})).stdout == "hi"


def test_cache_is_refreshed_when_the_file_changes(responses, make_ctx) -> None:
    assert run_builtin("replay", make_ctx(CONFIG, {"name": "t1"})).stdout == "first"
    write_lines(responses, [{"task": "t1", "model": "m1", "output": "rewritten, longer"}])
    stat = responses.stat()
    os.utime(responses, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert run_builtin("replay", make_ctx(CONFIG, {"name": "t1"})).stdout == "rewritten, longer"


def test_file_is_parsed_once_for_many_threads(responses, make_ctx, monkeypatch) -> None:
    replay_module._CACHE.clear()
    calls: list[Path] = []
    real_parse = replay_module.parse

    def counting_parse(path: Path, data: bytes) -> Any:
        calls.append(path)
        return real_parse(path, data)

    monkeypatch.setattr(replay_module, "parse", counting_parse)
    outputs: list[str] = []

    def one(index: int) -> None:
        ctx = make_ctx(CONFIG, {"name": "t1"}, sample_index=index)
        outputs.append(run_builtin("replay", ctx).stdout)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == [responses]
    assert sorted(outputs) == ["first"] * 8 + ["second"] * 8


def test_config_problems_replay() -> None:
    assert config_problems("replay", CONFIG) == []
    assert config_problems("replay", {"name": "c", "runner": "smevals:replay", "model": "m"}) == [
        ("responses", "required by smevals:replay"),
    ]
    assert config_problems("replay", {**CONFIG, "responses": 3}) == [
        ("responses", "must be a string, not integer"),
    ]
    assert config_problems("replay", {**CONFIG, "respones": "x.jsonl", "timeout": 5}) == [
        ("respones", "unknown key for smevals:replay; did you mean 'responses'? known keys: "
                     "description, model, name, prompt_template, responses, runner, system, "
                     "timeout"),
    ]


def test_bad_config_fails_the_run_at_launch(make_ctx) -> None:
    outcome = run_builtin("replay", make_ctx({"runner": "smevals:replay"}, {"name": "t1"}))
    assert outcome == BuiltinOutcome(
        stdout="",
        stderr="smevals:replay: bad config: responses: required by smevals:replay\n",
        exit_code=1,
        failure="launch",
    )


def test_unknown_builtin(make_ctx) -> None:
    assert config_problems("nope", {}) == [
        ("runner", "unknown built-in runner smevals:nope; built-ins: smevals:agent, "
                   "smevals:claude-code, smevals:codex, smevals:llm, smevals:openai, smevals:pi, "
                   "smevals:replay"),
    ]
    outcome = run_builtin("nope", make_ctx(CONFIG, {"name": "t1"}))
    assert (outcome.exit_code, outcome.failure) == (1, "launch")
    assert outcome.stderr == (
        "smevals:nope: unknown built-in runner smevals:nope; built-ins: smevals:agent, "
        "smevals:claude-code, smevals:codex, smevals:llm, smevals:openai, smevals:pi, "
        "smevals:replay\n"
    )


def test_unexpected_error_becomes_a_failed_run(make_ctx, monkeypatch) -> None:
    def broken(ctx: Any) -> Any:
        raise KeyError("surprise")

    monkeypatch.setattr(replay_module, "run", broken)
    outcome = run_builtin("replay", make_ctx(CONFIG, {"name": "t1"}))
    assert (outcome.exit_code, outcome.failure, outcome.stdout) == (1, "exit", "")
    assert outcome.stderr.startswith("smevals:replay: internal error: KeyError: 'surprise' (at ")
