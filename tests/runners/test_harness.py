"""smevals:codex, smevals:claude-code and smevals:pi, end to end through `smevals run`: a fake
harness (tests/helpers/harness.py) replays a recorded stream and records how it was started."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from smevals.spec.load import display_path as shown
from tests.helpers import SMEVALS, make_eval, wait_for
from tests.helpers.harness import fake_harness, fixture, seen
from tests.helpers.records import run_dirs, runs

PROGRAMS = {"codex": "codex", "claude-code": "claude", "pi": "pi"}


def containment() -> str:
    """What contains a harness of `harness_eval` here (`usage.sandbox`): it depends on the
    machine."""
    from smevals.proc.sandbox import Policy, describe

    return describe(Policy(1.0, {}, network=True, view="host"))


def harness_eval(tmp_path: Path, runner: str, stream: Path | bytes, config: str = "",
                 code: int = 0, stderr: str = "", model: str = "m1",
                 graders: dict[str, str] | None = None, **fake: Any) -> Path:
    """An Eval whose config runs `smevals:RUNNER` on a fake harness replaying `stream`. The
    fake reads its stream and writes what it saw outside the workspace, so it runs with
    the machine's files (`view: host`) unless `config` gives a `sandbox:` (the private view
    of a harness: tests/security/test_view.py)."""
    if "sandbox:" not in config:
        config += "sandbox: {view: host}\n"
    ev = make_eval(tmp_path / "ev", tasks={"fix": "prompt: Fix slugify\n"}, files={},
                   configs={"default": f"runner: smevals:{runner}\nmodel: {model}\n"
                                       f"executable: ../bin/{PROGRAMS[runner]}\n{config}"},
                   graders=graders)
    fake_harness(ev / "bin" / PROGRAMS[runner], stream, tmp_path / "seen.json",
                 program=PROGRAMS[runner], code=code, stderr=stderr, **fake)
    return ev


def entries(run_dir: Path) -> list[dict[str, Any]]:
    """The transcript's entries without their `t`, which each has: the seconds since the
    harness started when the line it came from arrived (0 for what smevals sent)."""
    got = [json.loads(line) for line in (run_dir / "transcript.jsonl").read_text().splitlines()]
    times = [entry.pop("t") for entry in got]
    assert all(isinstance(t, float) and t >= 0 for t in times), times
    assert times == sorted(times)
    return got


def only_run(ev: Path) -> tuple[dict[str, Any], Path]:
    (record,), (folder,) = runs(ev), run_dirs(ev)
    return record, folder


def test_codex_good_session(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-listed")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-not-listed")
    ev = harness_eval(tmp_path, "codex", fixture("codex-good.jsonl"),
                      "env: [OPENAI_API_KEY, NOT_SET_HERE]\nsandbox_mode: read-only\n"
                      "args: [--profile, ci]\n", model="gpt-5-codex")
    result = cli("run", str(ev))
    assert result.code == 0, result.both
    started = seen(tmp_path / "seen.json")
    assert started["argv"] == ["exec", "--json", "--skip-git-repo-check", "--color", "never",
                               "--sandbox", "read-only", "--model", "gpt-5-codex",
                               "--profile", "ci", "--", "Fix slugify"]
    env = started["env"]
    home = env["HOME"]
    assert env["CODEX_HOME"] == f"{home}/.codex" and env["OPENAI_API_KEY"] == "sk-listed"
    assert "GITHUB_TOKEN" not in env and "NOT_SET_HERE" not in env
    assert started["address_space"] == 32768 * 1024 * 1024
    assert not Path(home).exists()          # the private home is gone, its session with it
    record, folder = only_run(ev)
    assert record["status"] == "ok"
    assert (folder / "output.txt").read_text() == \
        "Fixed `slugify` to fold accents; all 4 tests pass."
    assert (folder / "agent-made.txt").read_text() == "made by the agent\n"
    assert not list(folder.rglob("session.jsonl"))
    assert (folder / "stderr.txt").read_text() == (
        "smevals:codex: env: NOT_SET_HERE is not set, so not passed\n"
        "smevals:codex: the harness said: Model metadata for `gpt-5-codex` not found. "
        "Defaulting to fallback metadata; this can degrade performance and cause issues.\n")
    usage = record["usage"]
    assert usage["duration_ms"] >= 0
    assert {k: v for k, v in usage.items() if k != "duration_ms"} == {
        "sandbox": containment(), "harness_sandbox": "read-only (sandbox_mode)",
        "input_tokens": 24763, "cached_input_tokens": 24448, "cache_creation_input_tokens": 0,
        "output_tokens": 122, "reasoning_tokens": 64, "total_tokens": 24885, "turns": 1,
        "tool_calls": [
            {"name": "command_execution", "arguments": {"command": "bash -lc ls"}},
            {"name": "command_execution",
             "arguments": {"command": "bash -lc 'python -m pytest -q'"}},
            {"name": "file_change", "arguments": {"changes": [
                {"path": "slugify.py", "kind": "update",
                 "diff": "@@ -1 +1 @@\n-import re\n+import re, unicodedata\n"},
                {"path": "test_extra.py", "kind": "add", "diff": "+def test_accents(): ...\n"}]}},
            {"name": "search", "arguments": {"q": "unicode slug"}}]}
    assert record["provenance"]["runner"] == {"name": "smevals:codex", "version": "9.8.7"}
    got = entries(folder)
    assert got[0] == {"type": "message", "role": "user", "text": "Fix slugify"}
    assert got[1]["raw"]["item"]["type"] == "error"          # a warning: kept, said in stderr
    assert got[2:6] == [
        {"type": "tool_call", "id": "item_1", "name": "command_execution",
         "arguments": {"command": "bash -lc ls"}, "turn": 0},
        {"type": "tool_result", "id": "item_1", "name": "command_execution",
         "output": "README.md\nslugify.py\n", "is_error": False, "exit_code": 0, "turn": 0},
        {"type": "tool_call", "id": "item_2", "name": "command_execution",
         "arguments": {"command": "bash -lc 'python -m pytest -q'"}, "turn": 0},
        {"type": "tool_result", "id": "item_2", "name": "command_execution",
         "output": "1 failed, 3 passed\n", "is_error": True, "exit_code": 1, "turn": 0}]
    kept = [e["raw"]["type"] for e in got if e["type"] == "event"]
    assert kept == ["item.completed", "item.plan.delta", "item.completed", "thread.renamed"]
    assert got[-1] == {"type": "message", "role": "assistant", "turn": 0,
                       "text": "Fixed `slugify` to fold accents; all 4 tests pass."}


def test_claude_code_good_session(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    ev = harness_eval(tmp_path, "claude-code", fixture("claude-good.jsonl"),
                      "env: [ANTHROPIC_API_KEY]\nmax_turns: 8\nmax_budget_usd: 0.5\n"
                      "system: Be brief.\nallowed_tools: [Bash, Edit]\n",
                      model="claude-sonnet-4-5")
    assert cli("run", str(ev)).code == 0
    started = seen(tmp_path / "seen.json")
    assert started["argv"] == [
        "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits",
        "--model", "claude-sonnet-4-5", "--max-turns", "8", "--max-budget-usd", "0.5",
        "--append-system-prompt", "Be brief.", "--allowedTools", "Bash", "Edit",
        "--", "Fix slugify"]
    assert started["env"]["CLAUDE_CONFIG_DIR"] == started["env"]["HOME"] + "/.claude"
    record, folder = only_run(ev)
    assert (folder / "output.txt").read_text() == "Fixed `slugify`; all 4 tests pass."
    assert record["usage"] == {     # modelUsage: the side request (haiku) counts too
        "sandbox": containment(), "harness_sandbox": "none (permission mode acceptEdits)",
        "model": "claude-sonnet-4-5-20250929", "input_tokens": 18 + 20480 + 5120 + 7,
        "output_tokens": 126, "reasoning_tokens": 40,
        "cached_input_tokens": 20480, "cache_creation_input_tokens": 5120,
        "total_tokens": 25751, "cost_usd": 0.0421, "turns": 3, "duration_ms": 15234,
        "tool_calls": [
            {"name": "Bash", "arguments": {"command": "python -m pytest -q",
                                           "description": "Run the tests"}},
            {"name": "Edit", "arguments": {"file_path": "slugify.py", "old_string": "re.sub",
                                           "new_string": "unicodedata.normalize"}}]}
    assert (folder / "stderr.txt").read_text() == (
        "smevals:claude-code: the harness said: retrying after an API error (529 overloaded): "
        "attempt 1 of 10\n")
    got = entries(folder)
    assert [e["raw"].get("subtype", e["raw"]["type"]) for e in got if e["type"] == "event"] \
        == ["init", "api_retry", "compact_boundary", "rate_limit_event"]
    assert [e for e in got if e["type"] != "event"] == [
        {"type": "message", "role": "system", "text": "Be brief."},
        {"type": "message", "role": "user", "text": "Fix slugify"},
        {"type": "message", "role": "assistant", "text": "I'll run the tests first.", "turn": 0},
        {"type": "tool_call", "id": "toolu_01", "name": "Bash", "turn": 0,
         "arguments": {"command": "python -m pytest -q", "description": "Run the tests"}},
        {"type": "tool_result", "id": "toolu_01", "name": "Bash", "output": "1 failed, 3 passed",
         "is_error": True, "turn": 0},
        {"type": "tool_call", "id": "toolu_02", "name": "Edit", "turn": 1,
         "arguments": {"file_path": "slugify.py", "old_string": "re.sub",
                       "new_string": "unicodedata.normalize"}},
        {"type": "tool_result", "id": "toolu_02", "name": "Edit", "is_error": False, "turn": 1,
         "output": "The file slugify.py has been updated."},
        {"type": "message", "role": "assistant", "text": "Fixed `slugify`; all 4 tests pass.",
         "turn": 2}]


def test_pi_good_session(cli, tmp_path: Path) -> None:
    ev = harness_eval(tmp_path, "pi", fixture("pi-good.jsonl"),
                      "allowed_tools: [read, bash]\n", model="anthropic/claude-sonnet-4-5")
    assert cli("run", str(ev)).code == 0
    started = seen(tmp_path / "seen.json")
    assert started["argv"] == ["--mode", "json", "-p", "--no-session",
                               "--model", "anthropic/claude-sonnet-4-5", "--tools", "read,bash",
                               "Fix slugify"]
    assert started["env"]["PI_CODING_AGENT_DIR"] == started["env"]["HOME"] + "/.pi/agent"
    assert started["env"]["PI_OFFLINE"] == "1"
    record, folder = only_run(ev)
    assert (folder / "stderr.txt").read_text() == \
        "smevals:pi: the harness said: retrying (attempt 1 of 3): overloaded_error\n"
    assert (folder / "output.txt").read_text() == "Fixed slugify; all 4 tests pass."
    usage = record["usage"]
    assert usage.pop("duration_ms") >= 0
    assert usage == {       # Pi's `input` leaves out the cache's tokens; smevals' holds them
        "sandbox": containment(), "harness_sandbox": "none (Pi has none)",
        "input_tokens": 3900 + 2800 + 100, "output_tokens": 82, "cached_input_tokens": 2800,
        "cache_creation_input_tokens": 100, "total_tokens": 6882, "cost_usd": 0.014145,
        "model": "claude-sonnet-4-5", "turns": 3,
        "tool_calls": [{"name": "read", "arguments": {"path": "slugify.py"}},
                       {"name": "bash", "arguments": {"command": "python -m pytest -q"}}]}
    assert entries(folder) == [
        {"type": "message", "role": "user", "text": "Fix slugify", "turn": 0},
        {"type": "message", "role": "assistant", "text": "Let me read the file.", "turn": 0},
        {"type": "tool_call", "id": "toolu_a1", "name": "read",
         "arguments": {"path": "slugify.py"}, "turn": 0},
        {"type": "tool_result", "id": "toolu_a1", "name": "read", "output": "def slugify(s): ...",
         "is_error": False, "turn": 0},
        {"type": "tool_call", "id": "toolu_a2", "name": "bash",
         "arguments": {"command": "python -m pytest -q"}, "turn": 1},
        {"type": "tool_result", "id": "toolu_a2", "name": "bash", "output": "4 passed",
         "is_error": False, "turn": 1},
        {"type": "event", "turn": 1, "raw": {"type": "auto_retry_start", "attempt": 1,
                                             "maxAttempts": 3, "delayMs": 2000,
                                             "errorMessage": "overloaded_error"}},
        {"type": "event", "turn": 1, "raw": {"type": "auto_retry_end", "success": True,
                                             "attempt": 1}},
        {"type": "message", "role": "assistant", "text": "Fixed slugify; all 4 tests pass.",
         "turn": 2},
        {"type": "event", "turn": 2, "raw": {"type": "extension_notice",
                                             "extension": "plan-mode", "text": "plan ready"}}]


FAILED = [
    ("codex", "codex-failed.jsonl", 1,
     "smevals:codex: the harness reported a failure: unexpected status 401 Unauthorized: "
     "Incorrect API key provided"),
    ("claude-code", "claude-failed.jsonl", 1,
     "smevals:claude-code: the harness reported a failure: error_max_turns: Reached maximum "
     "number of turns (1)"),
    ("pi", "pi-failed.jsonl", 0,
     "smevals:pi: the harness reported a failure: 401 Incorrect API key provided"),
]


@pytest.mark.parametrize(("runner", "stream", "code", "detail"), FAILED,
                         ids=[f[0] for f in FAILED])
def test_a_failed_turn_fails_the_run(cli, tmp_path: Path, runner: str, stream: str, code: int,
                                     detail: str) -> None:
    ev = harness_eval(tmp_path, runner, fixture(stream), code=code)
    result = cli("run", str(ev))
    assert result.code == 1
    record, folder = only_run(ev)
    assert record["status"] == "failed"
    assert record["failure"] == {"kind": "exit", "detail": detail}
    assert record["exit_code"] == 1
    got = entries(folder)
    assert got[-1]["type"] == "error" and got[-1]["message"] in detail
    assert "usage" in record and "turns" in record["usage"]


TRUNCATED = [
    ("codex", "codex-truncated.jsonl", "Looking at the files first.",
     'line 4 is not JSON (the stream ends in the middle of it): \'{"type":"item.completed",'
     '"item":{"id":"item_1","type":"command_execu\''),
    ("claude-code", "claude-truncated.jsonl", "Starting on it.",
     'line 3 is not JSON (the stream ends in the middle of it): \'{"type":"assistant",'
     '"message":{"id":"msg_02","type":"message","role":"assistant","content":[{"type":'
     '"tool_use","id":"toolu_01","na\''),
    ("pi", "pi-truncated.jsonl", "",
     'line 4 is not JSON (the stream ends in the middle of it): \'{"type":"message_end",'
     '"message":{"role":"assistant","content":[{"type":"text","text":"Reading the fi\''),
]


@pytest.mark.parametrize(("runner", "stream", "output", "error"), TRUNCATED,
                         ids=[t[0] for t in TRUNCATED])
def test_a_truncated_stream_fails_the_run_keeping_what_was_read(
        cli, tmp_path: Path, runner: str, stream: str, output: str, error: str) -> None:
    ev = harness_eval(tmp_path, runner, fixture(stream))
    assert cli("run", str(ev)).code == 1
    record, folder = only_run(ev)
    assert record["failure"] == {
        "kind": "exit", "detail": f"smevals:{runner}: the event stream is truncated: it ended "
                                  "before the harness's last event"}
    assert (folder / "output.txt").read_text() == output
    assert entries(folder)[-1] == {"type": "error", "message": error, "turn": 0}


def test_hostile_lines_are_said_and_skipped(cli, tmp_path: Path) -> None:
    """Bytes that are not UTF-8, a line that is not JSON, one that is not an object, a huge
    line: each is an error entry (or read with U+FFFD), and the Run goes on to its end."""
    good = fixture("codex-good.jsonl").read_bytes().splitlines(keepends=True)
    huge = b'{"type":"item.completed","item":{"id":"x","type":"agent_message","text":"' \
        + b"a" * (4 * 1024 * 1024) + b'"}}\n'
    stream = b"".join([good[0], b"\xff\xfe not json \x00\n", b"[1, 2]\n",
                       b'{"type":"item.completed","item":{"id":"item_9","type":"agent_message",'
                       b'"text":"caf\xe9 ok"}}\n', huge, *good[1:]])
    ev = harness_eval(tmp_path, "codex", stream)
    assert cli("run", str(ev)).code == 0
    record, folder = only_run(ev)
    assert record["status"] == "ok"
    got = entries(folder)
    assert got[1:5] == [
        {"type": "error", "message": "line 2 is not JSON: '\ufffd\ufffd not json \\x00'"},
        {"type": "error", "message": "line 3 is not a JSON object: [1,2]"},
        {"type": "message", "role": "assistant", "text": "caf\ufffd ok"},
        {"type": "error", "message": f"line 5 is {len(huge) - 1} bytes, over the 4194304 bytes "
                                     "one event may have; skipped"}]
    assert (folder / "output.txt").read_text() == \
        "Fixed `slugify` to fold accents; all 4 tests pass."


def test_the_deadline_ends_the_harness_keeping_what_it_said(cli, tmp_path: Path) -> None:
    ev = harness_eval(tmp_path, "pi", fixture("pi-truncated.jsonl"), sleep=60)
    assert cli("run", "--timeout", "1", str(ev)).code == 1
    record, folder = only_run(ev)
    assert record["failure"] == {"kind": "timeout",
                                 "detail": "smevals:pi: timed out after 1 s"}
    assert [e["type"] for e in entries(folder)] == ["error"]
    assert entries(folder)[0]["message"].startswith("line 4 is not JSON (the stream ends in ")
    assert record["exit_code"] is None or record["exit_code"] != 0   # ended, not finished


def test_a_harness_killed_by_a_signal(cli, tmp_path: Path) -> None:
    """(Where it is the first process of its own PID namespace, a process cannot kill
    itself: this one runs with `backend: none`.)"""
    ev = harness_eval(tmp_path, "codex", fixture("codex-good.jsonl"),
                      "sandbox: {backend: none, view: host}\n", signal=9)
    assert cli("run", str(ev)).code == 1
    record, folder = only_run(ev)
    assert record["failure"] == {"kind": "signal",
                                 "detail": "smevals:codex: the harness was killed by SIGKILL"}
    assert record["usage"]["sandbox"] == "none, host view"
    assert (folder / "output.txt").read_text() == \
        "Fixed `slugify` to fold accents; all 4 tests pass."


def test_links_left_under_smevals_names_are_never_written_through(cli, tmp_path: Path) -> None:
    """A harness that plants links where smevals writes its transcript and its usage."""
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    plant = (f"os.symlink({str(outside)!r}, 'transcript.jsonl')\n"
             f"os.symlink({str(outside)!r}, 'smevals-usage.json')")
    ev = harness_eval(tmp_path, "codex", fixture("codex-good.jsonl"), extra=plant)
    assert cli("run", str(ev)).code == 0
    assert outside.read_text() == "keep me\n"
    record, folder = only_run(ev)
    assert record["usage"]["turns"] == 1
    assert entries(folder)[0] == {"type": "message", "role": "user", "text": "Fix slugify"}
    assert (folder / "stderr.txt").read_text().splitlines()[0] == (
        f"smevals:codex: the harness left a symlink to {str(outside)!r} as transcript.jsonl: "
        "removed, never followed, and replaced by smevals' transcript")


def test_a_harness_that_prints_too_much_is_stopped(cli, tmp_path: Path) -> None:
    ev = harness_eval(tmp_path, "codex", fixture("codex-good.jsonl"),
                      "max_output_bytes: 1000\n", sleep=300)
    assert cli("run", str(ev)).code == 1
    record, folder = only_run(ev)
    assert record["failure"] == {
        "kind": "exit",
        "detail": "smevals:codex: the harness wrote more than 1000 bytes on stdout: it was "
                  "stopped"}
    assert entries(folder)[2]["type"] == "tool_call"     # what was read before is kept


def test_a_harness_that_exits_non_zero(cli, tmp_path: Path) -> None:
    ev = harness_eval(tmp_path, "claude-code", b"", code=3,
                      stderr="Error: Invalid API key\nPlease run /login\n")
    assert cli("run", str(ev)).code == 1
    record, folder = only_run(ev)
    assert record["failure"] == {
        "kind": "exit",
        "detail": "smevals:claude-code: the harness exited with 3 (its stderr ends: Error: "
                  "Invalid API key | Please run /login)"}
    assert (folder / "stderr.txt").read_text().startswith("Error: Invalid API key\n")
    assert record["exit_code"] == 3


@pytest.mark.parametrize(("runner", "package"), [
    ("codex", "@openai/codex"), ("claude-code", "@anthropic-ai/claude-code"),
    ("pi", "@mariozechner/pi-coding-agent")])
def test_a_harness_not_installed_is_exit_2_before_any_run(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner: str, package: str) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"fix": "prompt: Fix slugify\n"}, files={},
                   configs={"default": f"runner: smevals:{runner}\nmodel: m1\n"})
    bare = tmp_path / "bare"            # what the sandbox needs, and no harness
    bare.mkdir()
    for tool in ("unshare", "setpriv", "bwrap"):
        if found := shutil.which(tool):
            (bare / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bare))
    result = cli("run", str(ev))
    assert result.code == 2
    program = PROGRAMS[runner]
    assert result.err == (
        f"Error: {ev}/configs/default.yaml: smevals:{runner}: `{program}` is not installed "
        f"(not found on PATH); install it with `npm i -g {package}`, or set `executable:` "
        f"in the config to its path\n")
    assert not (ev / "results").exists()


def test_an_executable_that_is_not_there_and_a_task_without_a_prompt(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"chat": "messages: [{role: user, content: hi}]\n"},
                   files={}, configs={"default": "runner: smevals:claude-code\nmodel: m1\n"
                                                 "executable: ../bin/claude\n",
                                      "missing": "runner: smevals:codex\nmodel: m1\n"
                                                 "executable: ../bin/nothing\n"})
    result = cli("run", "-c", "missing", str(ev))
    assert (result.code, result.err) == (2, (
        f"Error: {ev}/configs/missing.yaml: smevals:codex: executable '../bin/nothing': no "
        f"such file ({ev}/configs/../bin/nothing)\n"))
    fake_harness(ev / "bin" / "claude", fixture("claude-good.jsonl"), tmp_path / "seen.json",
                 program="claude")
    assert cli("run", str(ev)).code == 1
    record, _ = only_run(ev)
    assert record["failure"] == {
        "kind": "launch", "detail": "smevals:claude-code: task 'chat' needs a non-empty string "
                                    "`prompt` for smevals:claude-code (`messages` are not "
                                    "supported)"}
    assert not (tmp_path / "seen.json").exists()


def test_the_harness_is_found_on_path(cli, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"fix": "prompt: -v is not an option\n"}, files={},
                   configs={"default": "runner: smevals:pi\nmodel: default\n"
                                       "allowed_tools: []\n"
                                       "sandbox: {network: false, memory_mb: 2048, "
                                       "view: host}\n"})
    fake_harness(tmp_path / "bin" / "pi", fixture("pi-good.jsonl"), tmp_path / "seen.json",
                 program="pi")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert cli("run", str(ev)).code == 0
    assert seen(tmp_path / "seen.json")["argv"] == [
        "--mode", "json", "-p", "--no-session", "--no-tools", " -v is not an option"]
    assert seen(tmp_path / "seen.json")["address_space"] == 2048 * 1024 * 1024
    from smevals.proc.sandbox import Policy, describe

    assert runs(ev)[0]["usage"]["sandbox"] == describe(Policy(1.0, {}, network=False,
                                                              view="host"))


def test_read_only_is_refused_for_a_harness(cli, tmp_path: Path) -> None:
    from smevals.proc.sandbox import Policy, SandboxRefused, describe

    try:
        describe(Policy(1.0, {}, read_only=True, view="host"))
    except SandboxRefused:
        pytest.skip("this machine cannot give read_only: `run` refuses it before any Run")
    ev = harness_eval(tmp_path, "pi", fixture("pi-good.jsonl"))
    (ev / "tasks" / "fix.yaml").write_text("prompt: Fix slugify\nsandbox: {read_only: true}\n")
    assert cli("run", str(ev)).code == 1
    record, _ = only_run(ev)
    assert record["failure"] == {
        "kind": "launch", "detail": "smevals:pi: sandbox: read_only is not supported by the "
                                    "harness runners with view: host (a harness writes its "
                                    "private home, outside the workspace)"}
    assert not (tmp_path / "seen.json").exists()


def test_ctrl_c_ends_the_harness_at_once(tmp_path: Path) -> None:
    """The harness is one of the command's children: SIGINT ends it, not its own end."""
    ev = harness_eval(tmp_path, "codex", fixture("codex-truncated.jsonl"), sleep=300)
    proc = subprocess.Popen([SMEVALS, "run", str(ev)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        wait_for((tmp_path / "seen.json").exists, "the harness to start")
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)      # a bound, not a timing claim
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err


def test_the_tool_checkers_read_the_transcript(cli, tmp_path: Path) -> None:
    """The transcript's calls, with arguments usage.tool_calls shortens."""
    long_command = "echo " + "x" * 9000
    stream = fixture("codex-good.jsonl").read_bytes().replace(
        b"bash -lc ls", long_command.encode())
    graders = {"default": f"""
        checks:
          - checker: tool_called
            tools: [file_change, search]
          - checker: tool_sequence
            tools: [command_execution, file_change]
          - checker: tool_argument_assertion
            tool: command_execution
            path: command
            equals: {long_command}
          - checker: tool_not_called
            tools: [web_search]
        """}
    ev = harness_eval(tmp_path, "codex", stream, graders=graders)
    result = cli("run", "-g", str(ev))
    assert result.code == 0, result.both
    record, _ = only_run(ev)
    assert record["usage"]["tool_calls"][0] == {
        "name": "command_execution", "arguments": "(9019 bytes: see transcript.jsonl)"}
    (ev / "bin" / "codex").unlink()     # a machine without the harness still reports its Runs
    report = cli("report", str(ev))
    assert report.code == 0 and "- Graded: 1 runs (0 failed, 0 ungraded)\n" in report.out


def test_the_config_keys_are_validated(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", files={}, configs={
        "codex": "runner: smevals:codex\nmodel: m\nsandbox_mode: yolo\nenv: [BAD-NAME]\n",
        "claude": "runner: smevals:claude-code\nmodel: m\nmax_turns: 0\nargs: [1]\n"
                  "allowed_tool: [Bash]\n",
        "pi": "runner: smevals:pi\nmodel: m\nallowed_tools: [Read]\nmax_budget_usd: 1\n"})
    at = shown(ev)
    result = cli("validate", str(ev))
    assert result.code == 2
    assert result.err.splitlines()[:-1] == [
        f"{at}/configs/claude.yaml:3:1: max_turns: must be > 0, not 0",
        f"{at}/configs/claude.yaml:4:1: args.0: must be a string, not integer",
        f"{at}/configs/claude.yaml:5:1: allowed_tool: unknown key for smevals:claude-code; "
        "did you mean 'allowed_tools'? known keys: allowed_tools, api_key_env, args, base_url, "
        "description, disallowed_tools, env, executable, idle_timeout, max_budget_usd, "
        "max_output_bytes, max_retries, max_turns, model, name, permission_mode, "
        "prompt_template, runner, sandbox, system, timeout",
        f"{at}/configs/codex.yaml:3:1: sandbox_mode: must be one of read-only, workspace-write, "
        "danger-full-access",
        f"{at}/configs/codex.yaml:4:1: env.0: is not an environment variable name: 'BAD-NAME'",
        f"{at}/configs/pi.yaml:3:1: allowed_tools.0: is not a Pi tool name: 'Read'",
        f"{at}/configs/pi.yaml:4:1: max_budget_usd: unknown key for smevals:pi; known keys: "
        "allowed_tools, api, api_key_env, args, base_url, description, env, executable, "
        "idle_timeout, max_output_bytes, max_retries, model, name, prompt_template, runner, "
        "sandbox, system, timeout"]
