"""The streams the real CLIs wrote (tests/fixtures/harness/PROGRAM-VERSION/, recorded by
tools/record_harness.py from the scripted servers of tools/model_servers.py), replayed
offline through `smevals run`: each reads as the live run did. The workspace's path in
them (@WORKSPACE@) is the Run's own again when replayed, so the paths are made relative
here too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import make_eval
from tests.helpers.harness import fake_harness, recorded
from tests.helpers.records import run_dirs, runs
from tools.harness_scripts import CONTENT, FIRST, LAST

RUNNERS = {"codex": "codex", "claude": "claude-code", "pi": "pi"}
BILLED = FIRST + LAST
STREAMS = recorded()


def test_every_harness_and_scenario_is_recorded() -> None:
    found = {(p.parent.name.split("-")[0], p.stem) for p in STREAMS}
    assert found == {(program, scenario) for program in RUNNERS
                     for scenario in ("good", "unauthorized", "dead")}


def replay(cli: Any, tmp_path: Path, stream: Path, **fake: Any) -> tuple[dict[str, Any], Path]:
    program, version = stream.parent.name.split("-", 1)
    runner = RUNNERS[program]
    ev = make_eval(tmp_path / "ev", tasks={"hello": "prompt: Write hello.py that greets.\n"},
                   files={}, configs={"default": (
                       f"runner: smevals:{runner}\nmodel: scripted-model\n"
                       f"executable: ../bin/{program}\nbase_url: http://127.0.0.1:9/v1\n"
                       "idle_timeout: 2\nsandbox: {view: host}\n")})
    fake_harness(ev / "bin" / program, stream, tmp_path / "seen.json", program=program,
                 version=f"{program} {version}", **fake)
    cli("run", "--timeout", "300", str(ev))
    (record,), (folder,) = runs(ev), run_dirs(ev)
    assert record["provenance"]["runner"] == {"name": f"smevals:{runner}", "version": version}
    return record, folder


def entries(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "transcript.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("stream", [s for s in STREAMS if s.stem == "good"],
                         ids=lambda s: s.parent.name)
def test_a_good_session(cli, tmp_path: Path, stream: Path) -> None:
    record, folder = replay(cli, tmp_path, stream)
    assert record["status"] == "ok", record["failure"]
    assert (folder / "output.txt").read_text() == "Done: hello.py prints the greeting."
    usage = record["usage"]
    assert {k: usage.get(k) for k in ("input_tokens", "cached_input_tokens", "output_tokens",
                                      "total_tokens")} == {
        "input_tokens": BILLED.input, "cached_input_tokens": BILLED.cached,
        "output_tokens": BILLED.output, "total_tokens": BILLED.total}
    (call,) = usage["tool_calls"]
    assert call["arguments"] in ({"file_path": "hello.py", "content": CONTENT},
                                 {"path": "hello.py", "content": CONTENT}) \
        or call["arguments"]["command"].endswith("> hello.py\"")
    text = (folder / "transcript.jsonl").read_text()
    assert "@WORKSPACE@" not in text and "/.staging/" not in text
    kept = [e["raw"] for e in entries(folder) if e["type"] == "event"]
    assert all(r["type"] in ("system", "item.completed") for r in kept), kept


@pytest.mark.parametrize("stream", [s for s in STREAMS if s.stem == "unauthorized"],
                         ids=lambda s: s.parent.name)
def test_a_refused_key(cli, tmp_path: Path, stream: Path) -> None:
    record, folder = replay(cli, tmp_path, stream, code=1 if "claude" in stream.parent.name else 0)
    runner = RUNNERS[stream.parent.name.split("-")[0]]
    assert record["failure"]["kind"] == "exit"
    assert record["failure"]["detail"].startswith(
        f"smevals:{runner}: the harness reported a failure: " + {
            "codex": "unexpected status 401 Unauthorized: invalid x-api-key, url: ",
            "claude-code": "API error 401 (authentication_error): Invalid API key",
            "pi": "401 invalid x-api-key"}[runner])
    assert (folder / "output.txt").read_text() == ""     # never Claude Code's made-up text


@pytest.mark.parametrize("stream", [s for s in STREAMS if s.stem == "dead"],
                         ids=lambda s: s.parent.name)
def test_a_dead_server(cli, tmp_path: Path, stream: Path) -> None:
    """Codex says "Reconnecting..." for ever (the fake sleeps after it: the idle timeout ends
    it); Claude Code and Pi give up."""
    codex = stream.parent.name.startswith("codex")
    record, _ = replay(cli, tmp_path, stream, sleep=300 if codex else 0,
                       code=1 if "claude" in stream.parent.name else 0)
    detail = record["failure"]["detail"]
    if codex:
        assert record["failure"]["kind"] == "timeout"
        assert detail.startswith("smevals:codex: no event from the harness for 2 s")
    else:
        assert record["failure"]["kind"] == "exit"
        assert "Connection" in detail and "the harness reported a failure: " in detail
