"""The real Codex, Claude Code and Pi through `smevals run`, each against a scripted local
server speaking its wire protocol (tools/model_servers.py), with nothing but `base_url:`
(and, to keep CI fast, low `idle_timeout` and `max_retries`) in its Config: the file the
model asks for lands in the Run, the grade passes, the usage is the server's sums, and a
401 or a dead server ends as a clear failed Run before the Run's deadline.

They skip where the CLI is not installed; .ci/run installs pinned versions and makes them
required (tests/helpers/real_harness.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import make_eval
from tests.helpers.real_harness import require
from tests.helpers.records import grade_records, run_dirs, runs
from tools.harness_scripts import CONTENT, REAL, Real, script
from tools.model_servers import ModelServer, dead_url

KEY = "sk-scripted-0123456789"
GRADER = """
checks:
  - checker: contains
    file: hello.py
    value: "print('hello from the harness')"
  - checker: contains
    value: Done
"""


def harness_eval(tmp_path: Path, real: Real, base_url: str, idle: int = 30) -> Path:
    config = (f"runner: smevals:{real.runner}\nmodel: scripted-model\nbase_url: {base_url}\n"
              f"api_key_env: SCRIPTED_KEY\nidle_timeout: {idle}\nmax_retries: 0\n")
    return make_eval(tmp_path / "ev", tasks={"hello": "prompt: Write hello.py that greets.\n"},
                     configs={"default": config}, graders={"default": GRADER}, files={})


def entries(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "transcript.jsonl").read_text().splitlines()]


@pytest.fixture(params=sorted(REAL))
def real(request: pytest.FixtureRequest) -> Real:
    found = REAL[request.param]
    require(found)
    return found


def test_a_model_server_in_one_line(cli, tmp_path: Path, real: Real,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRIPTED_KEY", KEY)
    with ModelServer(real.protocol, script(real.runner)) as server:
        ev = harness_eval(tmp_path, real, server.base_url)
        result = cli("run", "-g", "--timeout", "240", str(ev))
    assert result.code == 0, result.both
    (record,), (folder,) = runs(ev), run_dirs(ev)
    assert record["status"] == "ok"
    assert (folder / "hello.py").read_text() == CONTENT
    assert (folder / "output.txt").read_text() == "Done: hello.py prints the greeting."
    (grade,) = grade_records(ev)
    assert grade["outcome"] == "pass", grade["checks"]
    usage = record["usage"]
    billed = server.billed
    assert {k: usage.get(k) for k in ("input_tokens", "cached_input_tokens", "output_tokens",
                                      "total_tokens")} == {
        "input_tokens": billed.input, "cached_input_tokens": billed.cached,
        "output_tokens": billed.output, "total_tokens": billed.total}
    if real.runner == "codex":
        assert usage["reasoning_tokens"] == billed.reasoning
    assert "cost_usd" not in usage          # a local model: no price is known
    assert all(r.headers.get("authorization") == f"Bearer {KEY}"
               or r.headers.get("x-api-key") == KEY for r in server.requests)
    assert KEY not in json.dumps(record)
    assert not [p for p in folder.rglob("*") if p.is_file() and KEY in p.read_text("utf-8",
                                                                                  "replace")]
    assert record["provenance"]["runner"]["name"] == f"smevals:{real.runner}"
    assert record["provenance"]["runner"]["version"][0].isdigit()
    got = entries(folder)
    assert all(isinstance(e.get("t"), float) for e in got)
    kept = [e["raw"] for e in got if e["type"] == "event"]     # verbatim: init, warnings
    assert [(r["type"], r.get("subtype") or r.get("item", {}).get("type")) for r in kept] == {
        "codex": [("item.completed", "error")], "claude-code": [("system", "init")],
        "pi": []}[real.runner]
    text = (folder / "transcript.jsonl").read_text() + json.dumps(usage)
    assert str(folder.parent) not in text and "/.staging/" not in text


def test_a_model_server_that_refuses_the_key(cli, tmp_path: Path, real: Real,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRIPTED_KEY", KEY)
    with ModelServer(real.protocol, status=401) as server:
        ev = harness_eval(tmp_path, real, server.base_url)
        assert cli("run", "--timeout", "240", str(ev)).code == 1
    (record,), (folder,) = runs(ev), run_dirs(ev)
    said = {"codex": "unexpected status 401 Unauthorized: invalid x-api-key, url: "
                     f"{server.base_url}/responses",
            "claude-code": "API error 401 (authentication_error): Invalid API key · Fix "
                           "external API key",
            "pi": "401 invalid x-api-key"}[real.runner]
    assert record["failure"] == {
        "kind": "exit", "detail": f"smevals:{real.runner}: the harness reported a failure: "
                                  f"{said}"}
    assert (folder / "output.txt").read_text() == ""
    assert [e["message"] for e in entries(folder) if e["type"] == "error"][-1] == said


def test_a_dead_model_server(cli, tmp_path: Path, real: Real) -> None:
    """Nothing listens: Claude Code and Pi give up after their retries; Codex waits for ever
    ("Reconnecting..."), so the idle timeout ends it."""
    ev = harness_eval(tmp_path, real, dead_url(), idle=4 if real.runner == "codex" else 30)
    assert cli("run", "--timeout", "240", str(ev)).code == 1
    (record,) = runs(ev)
    detail = record["failure"]["detail"]
    assert record["status"] == "failed", detail
    if real.runner == "codex":
        assert record["failure"]["kind"] == "timeout"
        assert detail.startswith("smevals:codex: no event from the harness for 4 s "
                                 "(idle_timeout)")
        assert detail.endswith(": it was stopped")
    else:
        assert record["failure"]["kind"] == "exit"
        assert detail.startswith({
            "claude-code": "smevals:claude-code: the harness reported a failure: API error "
                           "(connection_failed): ",
            "pi": "smevals:pi: the harness reported a failure: Connection error"}[real.runner])
