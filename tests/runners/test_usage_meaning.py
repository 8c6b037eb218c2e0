"""One meaning of usage for every runner that talks to a model server (docs/runners.md#usage):
`input_tokens` holds the cached ones, `cached_input_tokens`, `output_tokens` holds the
reasoning ones, `reasoning_tokens`, and `total_tokens` is what the server was asked to
bill. `smevals:agent` and `smevals:openai` here, against a chat-completions server whose
sums are known (the harnesses: test_harness_real.py, test_harness_recorded.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.helpers import make_eval
from tests.helpers.records import runs
from tools.model_servers import Call, ModelServer, Reply, Usage

FIRST = Usage(input=900, cached=600, output=40, reasoning=25)
LAST = Usage(input=1000, cached=900, output=8, reasoning=3)


def usage_of(cli, tmp_path: Path, runner: str, server: ModelServer,
             extra: str = "") -> dict[str, Any]:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: Write notes.txt, then say done.\n"},
                   files={}, configs={"default": f"runner: smevals:{runner}\nmodel: tiny\n"
                                                 f"base_url: {server.base_url}\nretries: 0\n"
                                                 f"{extra}"})
    result = cli("run", str(ev))
    assert result.code == 0, result.both
    (record,) = runs(ev)
    usage: dict[str, Any] = record["usage"]
    return usage


def counts(usage: dict[str, Any]) -> dict[str, Any]:
    keys = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens",
            "total_tokens")
    return {key: usage.get(key) for key in keys}


def billed(usage: Usage) -> dict[str, Any]:
    return {"input_tokens": usage.input, "cached_input_tokens": usage.cached,
            "output_tokens": usage.output, "reasoning_tokens": usage.reasoning,
            "total_tokens": usage.total}


def test_the_agent_sums_what_the_server_billed(cli, tmp_path: Path) -> None:
    script = [Reply(calls=(Call("write_file", {"path": "notes.txt", "content": "x"}),),
                    usage=FIRST),
              Reply("done", usage=LAST)]
    with ModelServer("chat", script) as server:
        usage = usage_of(cli, tmp_path, "agent", server)
    assert counts(usage) == billed(server.billed) == billed(FIRST + LAST)


def test_openai_records_what_the_server_billed(cli, tmp_path: Path) -> None:
    with ModelServer("chat", [Reply("done", usage=FIRST)], side=None) as server:
        usage = usage_of(cli, tmp_path, "openai", server)
    assert counts(usage) == billed(server.billed) == billed(FIRST)
