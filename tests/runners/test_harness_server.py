"""What smevals gives each harness for `base_url:`, `api_key_env:`, `api:`, `max_retries:` and
its sandbox, and how `idle_timeout` ends a harness: through `smevals run`, on the fake
harness (tests/helpers/harness.py), which records its command line, environment and the
settings files in its home."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from smevals.spec.load import display_path as shown
from tests.helpers import make_eval
from tests.helpers.harness import fake_harness, fixture, seen
from tests.helpers.records import run_dirs, runs

PROGRAMS = {"codex": "codex", "claude-code": "claude", "pi": "pi"}
KEY = "sk-local-0123456789"
URL = "http://127.0.0.1:11434/v1"


def containment() -> str:
    from smevals.proc.sandbox import Policy, describe

    return describe(Policy(1.0, {}, network=True, view="host"))


def host_view(config: str) -> str:
    """The fake harness reads its stream and writes what it saw outside the workspace: it
    runs with the machine's files (`view: host`) unless `config` gives a `sandbox:` (the
    private view is tested in tests/security/test_view.py)."""
    return "" if "sandbox:" in config else "sandbox: {view: host}\n"


def server_eval(tmp_path: Path, runner: str, config: str, stream: Path | bytes | None = None,
                **fake: Any) -> Path:
    ev = make_eval(tmp_path / "ev", tasks={"fix": "prompt: Fix slugify\n"}, files={},
                   configs={"default": f"runner: smevals:{runner}\nmodel: qwen3:8b\n"
                                       f"executable: ../bin/{PROGRAMS[runner]}\n{config}"
                                       + host_view(config)})
    stream = stream if stream is not None else fixture(
        {"codex": "codex-good.jsonl", "claude-code": "claude-good.jsonl",
         "pi": "pi-good.jsonl"}[runner])
    fake_harness(ev / "bin" / PROGRAMS[runner], stream, tmp_path / "seen.json",
                 program=PROGRAMS[runner], **fake)
    return ev


def only_run(ev: Path) -> tuple[dict[str, Any], Path]:
    (record,), (folder,) = runs(ev), run_dirs(ev)
    return record, folder


def no_key_in(record: dict[str, Any], folder: Path) -> bool:
    files = [p.read_text("utf-8", "replace") for p in folder.rglob("*") if p.is_file()]
    return KEY not in json.dumps(record) and not any(KEY in text for text in files)


def test_codex_gets_a_provider_of_the_responses_api(cli, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_KEY", KEY)
    ev = server_eval(tmp_path, "codex", f"base_url: {URL}\napi_key_env: LOCAL_KEY\n"
                                        "max_retries: 2\n")
    assert cli("run", str(ev)).code == 0
    started = seen(tmp_path / "seen.json")
    assert started["files"][".codex/config.toml"] == (
        'model_provider = "smevals"\ncheck_for_update_on_startup = false\n\n[analytics]\n'
        'enabled = false\n\n[model_providers.smevals]\nname = "smevals"\n'
        'base_url = "http://127.0.0.1:11434/v1"\nwire_api = "responses"\n'
        'supports_websockets = false\nenv_key = "LOCAL_KEY"\nrequest_max_retries = 2\n'
        'stream_max_retries = 2\n')
    assert started["env"]["LOCAL_KEY"] == KEY and KEY not in json.dumps(started["files"])
    assert started["argv"][:9] == ["exec", "--json", "--skip-git-repo-check", "--color",
                                   "never", "--sandbox", "danger-full-access" if containment()
                                   != "none" else "workspace-write", "--model", "qwen3:8b"]
    record, folder = only_run(ev)
    assert record["config"]["base_url"] == URL and record["config"]["api_key_env"] == "LOCAL_KEY"
    assert no_key_in(record, folder)


def test_claude_code_gets_its_environment(cli, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_KEY", KEY)
    ev = server_eval(tmp_path, "claude-code", f"base_url: {URL}\napi_key_env: LOCAL_KEY\n"
                                              "max_retries: 1\n")
    assert cli("run", str(ev)).code == 0
    env = seen(tmp_path / "seen.json")["env"]
    assert {k: env.get(k) for k in (
        "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "CLAUDE_CODE_MAX_RETRIES",
        "ANTHROPIC_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL",
        "ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_SMALL_FAST_MODEL",
        "CLAUDE_CODE_SUBAGENT_MODEL", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_AUTOUPDATER", "LOCAL_KEY")} == {
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:11434", "ANTHROPIC_API_KEY": KEY,
        "CLAUDE_CODE_MAX_RETRIES": "1", **dict.fromkeys(
            ("ANTHROPIC_MODEL", "ANTHROPIC_DEFAULT_HAIKU_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL",
             "ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_SMALL_FAST_MODEL",
             "CLAUDE_CODE_SUBAGENT_MODEL"), "qwen3:8b"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
        "LOCAL_KEY": None}
    assert no_key_in(*only_run(ev))


@pytest.mark.parametrize(("api", "theirs", "url"), [
    (None, "openai-completions", URL), ("openai-responses", "openai-responses", URL),
    ("anthropic-messages", "anthropic-messages", "http://127.0.0.1:11434")])
def test_pi_gets_a_models_json(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                               api: str | None, theirs: str, url: str) -> None:
    monkeypatch.setenv("LOCAL_KEY", KEY)
    ev = server_eval(tmp_path, "pi", f"base_url: {URL}/\napi_key_env: LOCAL_KEY\n"
                                     f"max_retries: 0\n" + (f"api: {api}\n" if api else ""))
    assert cli("run", str(ev)).code == 0
    started = seen(tmp_path / "seen.json")
    assert started["argv"][:6] == ["--mode", "json", "-p", "--no-session", "--model",
                                   "smevals/qwen3:8b"]
    files = started["files"]
    assert json.loads(files[".pi/agent/models.json"]) == {"providers": {"smevals": {
        "baseUrl": url, "api": theirs, "apiKey": "LOCAL_KEY", "models": [{"id": "qwen3:8b"}]}}}
    assert json.loads(files[".pi/agent/settings.json"]) == {
        "retry": {"enabled": False, "maxRetries": 0, "provider": {"maxRetries": 0}}}
    assert started["env"]["LOCAL_KEY"] == KEY and KEY not in json.dumps(files)
    record, folder = only_run(ev)
    assert "cost_usd" not in record["usage"]     # Pi prices a model it was given as free
    assert no_key_in(record, folder)


def test_a_server_without_a_key(cli, tmp_path: Path) -> None:
    """Ollama and llama.cpp want none: Codex gets no `env_key` (it refuses one that is not
    set), Claude Code and Pi a placeholder; the unset variable is said."""
    for runner in ("codex", "claude-code", "pi"):
        ev = server_eval(tmp_path / runner, runner, f"base_url: {URL}\napi_key_env: NOT_SET\n")
        assert cli("run", str(ev)).code == 0
        started = seen(tmp_path / runner / "seen.json")
        record, folder = only_run(ev)
        assert (folder / "stderr.txt").read_text().startswith(
            f"smevals:{runner}: api_key_env: NOT_SET is not set, so ")
        config = started["files"].get(".codex/config.toml", "")
        models = json.loads(started["files"].get(".pi/agent/models.json", "{}"))
        if runner == "codex":
            assert "env_key" not in config and 'base_url = "http' in config
        elif runner == "claude-code":
            assert started["env"]["ANTHROPIC_API_KEY"] == "smevals-no-key"
        else:
            assert models["providers"]["smevals"]["apiKey"] == "NOT_SET"


def test_bad_server_keys_are_exit_2_at_their_line(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", files={}, configs={
        "codex": "runner: smevals:codex\nmodel: m\nbase_url: localhost:11434\nmax_retries: -1\n",
        "claude": "runner: smevals:claude-code\nmodel: m\napi_key_env: KEY\nidle_timeout: 0\n",
        "pi": f"runner: smevals:pi\nmodel: m\nbase_url: {URL}\napi: chat\n",
        "retries": "runner: smevals:codex\nmodel: m\nmax_retries: 3\n"})
    at = shown(ev)
    result = cli("validate", str(ev))
    assert result.code == 2
    assert result.err.splitlines()[:-1] == [
        f"{at}/configs/claude.yaml:3:1: api_key_env: only with base_url (without it the "
        "harness uses its own provider: list its key variable in env:)",
        f"{at}/configs/claude.yaml:4:1: idle_timeout: must be > 0, not 0",
        f"{at}/configs/codex.yaml:3:1: base_url: must be an http:// or https:// URL, not "
        "'localhost:11434'",
        f"{at}/configs/codex.yaml:4:1: max_retries: must be >= 0, not -1",
        f"{at}/configs/pi.yaml:4:1: api: must be one of openai-chat, openai-responses, "
        "anthropic-messages",
        f"{at}/configs/retries.yaml:3:1: max_retries: only with base_url for smevals:codex "
        "(its own provider keeps its retries)"]


def test_codex_keeps_its_own_sandbox_where_smevals_has_none(cli, tmp_path: Path) -> None:
    """Codex's own sandbox cannot start inside smevals' (bubblewrap cannot nest): where
    smevals' is in force it is off, where smevals' is off (`backend: none`) it is on."""
    off = server_eval(tmp_path / "off", "codex", "sandbox: {backend: none, view: host}\n")
    assert cli("run", str(off)).code == 0
    argv = seen(tmp_path / "off" / "seen.json")["argv"]
    assert argv[argv.index("--sandbox") + 1] == "workspace-write"
    assert only_run(off)[0]["usage"]["harness_sandbox"] == \
        "workspace-write: smevals' sandbox is off"
    if containment() == "none":
        pytest.skip("no sandbox can be made here: Codex keeps its own by default")
    on = server_eval(tmp_path / "on", "codex", "")
    assert cli("run", str(on)).code == 0
    argv = seen(tmp_path / "on" / "seen.json")["argv"]
    assert argv[argv.index("--sandbox") + 1] == "danger-full-access"
    usage = only_run(on)[0]["usage"]
    assert (usage["sandbox"], usage["harness_sandbox"]) == (
        containment(), "off (danger-full-access): smevals' sandbox contains it")


def test_an_idle_harness_is_stopped(cli, tmp_path: Path) -> None:
    """No event for `idle_timeout` seconds ends the Run as a timeout, long before its
    deadline; Codex's "Reconnecting..." (which it says for ever when its server is down)
    is no event."""
    start = (b'{"type":"thread.started","thread_id":"t1"}\n{"type":"turn.started"}\n')
    ev = server_eval(tmp_path, "codex", "idle_timeout: 2\n", start,
                     repeat='{"type":"error","message":"Reconnecting... waiting for network"}\n')
    assert cli("run", "--timeout", "300", str(ev)).code == 1
    record, folder = only_run(ev)
    assert record["failure"] == {
        "kind": "timeout",
        "detail": "smevals:codex: no event from the harness for 2 s (idle_timeout) (its last "
                  "word: Reconnecting... waiting for network): it was stopped"}
    assert (folder / "stderr.txt").read_text().startswith(
        "smevals:codex: the harness said: Reconnecting... waiting for network\n")


def test_codexs_noise_is_left_out_of_stderr(cli, tmp_path: Path) -> None:
    """Codex says "Reading additional input from stdin..." on every Run, and warned that it
    could not make its helpers when its home was under the temporary folder: it no longer is
    (TMPDIR is a folder of its own in the private home)."""
    ev = server_eval(tmp_path, "codex", "",
                     stderr="Reading additional input from stdin...\nsomething real\n")
    assert cli("run", str(ev)).code == 0
    env = seen(tmp_path / "seen.json")["env"]
    assert env["TMPDIR"] == env["HOME"] + "/tmp" and not env["CODEX_HOME"].startswith(
        env["TMPDIR"])
    assert only_run(ev)[1].joinpath("stderr.txt").read_text().startswith("something real\n")
