"""One Run of a harness (runners/harness.py defines them): in smevals' sandbox, in the Run's
workspace, with its private home; its stream watched as it arrives (runners/watch.py: the
idle deadline, each line's time) and read into the Run (runners/events.py): the transcript
with workspace-relative paths, the final message, the usage and the verdict.

Every start of a harness program goes through `_launch` (the one call of
`run_sandboxed`), asking its version included, with host paths: the workspace, the
private home and the executable as they are on this machine.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from smevals.runners.base import BuiltinContext, BuiltinOutcome, RunFailed
from smevals.runners.events import Collector, read_stream, usage_calls
from smevals.runners.harness import (
    DEFAULT_IDLE,
    DEFAULT_TIMEOUT,
    MEMORY_MB,
    PROCESSES,
    SHOWN_STDERR,
    STDERR_CAP,
    STREAM_CAP,
    Harness,
    Launch,
    config_problems,
    environment,
    find_executable,
    private_home,
    task_prompt,
)
from smevals.runners.server import server_of
from smevals.runners.versions import ASK_TIMEOUT, version_of
from smevals.runners.watch import LineWatch, pattern, relative, roots
from smevals.store import transcript

if TYPE_CHECKING:
    from pathlib import Path

    from smevals.proc.sandbox import Outcome, Policy
    from smevals.proc.setting import Setting


def run_harness(harness: Harness, ctx: BuiltinContext) -> BuiltinOutcome:
    if problems := config_problems(harness, ctx.config):
        text = "; ".join(f"{key}: {message}" for key, message in problems)
        raise RunFailed(f"bad config: {text}", failure="launch")
    prompt = task_prompt(ctx, harness)
    program, why = find_executable(harness, ctx.config, ctx.config_dir, ctx.environ)
    if program is None:
        raise RunFailed(why.removeprefix(harness.prefix + ": "), failure="launch")
    setting = setting_of(ctx)
    start = time.monotonic()
    watch = LineWatch(harness.retrying, start)
    with private_home() as home:
        env, missing = environment(ctx, harness, home, setting.env)
        rules = policy(ctx, setting, env, watch)
        launch = Launch(ctx, home, env, server_of(ctx.config, ctx.environ), _contained(rules))
        argv = [program, *harness.prepare(launch), *(ctx.config.get("args") or []),
                *harness.prompt(ctx, prompt)]
        version = version_of(program, lambda asked: _ask(asked, ctx, rules))
        start = watch.start = time.monotonic()
        child = _launch(argv, ctx, rules)
    seconds = time.monotonic() - start
    read = read_stream(child.stdout, harness.reader(ctx.config), watch.at)
    notes = [f"{harness.prefix}: env: {name} is not set, so not passed" for name in missing]
    notes += [f"{harness.prefix}: {note}" for note in launch.notes]
    paths = pattern(roots(ctx.workspace))
    read.entries = relative(_sent(ctx, harness, prompt) + read.entries, paths)
    read.final = relative(read.final, paths)
    left = keep_transcript(ctx.workspace, read.entries)
    if left is not None:
        notes.append(f"{harness.prefix}: the harness left {left} as {transcript.NAME}: "
                     f"removed, never followed, and replaced by smevals' transcript")
    notes += [f"{harness.prefix}: the harness said: {note}" for note in read.notes]
    outcome = _outcome(harness, ctx, child, read, notes, seconds)
    outcome.usage = {**(outcome.usage or {}), "harness_sandbox": launch.own_sandbox} \
        if launch.own_sandbox else outcome.usage
    outcome.provenance = {"runner": {"name": harness.prefix, "version": version}}
    return outcome


def keep_transcript(workspace: Path, entries: list[transcript.Entry]) -> str | None:
    """Write the transcript as a new file in the workspace, never through what the harness
    left under its name (removed first); what that was, or None."""
    from smevals.store.workspace import open_dir, remove, write_new

    fd = open_dir(workspace)
    try:
        left = remove(fd, transcript.NAME)
        write_new(fd, transcript.NAME, transcript.dump(entries))
    finally:
        os.close(fd)
    return left


def _sent(ctx: BuiltinContext, harness: Harness, prompt: str) -> list[transcript.Entry]:
    """What smevals gave the harness, first in the transcript: the Config's `system`, and
    the prompt (unless the harness's own stream starts with it)."""
    sent: list[transcript.Entry] = []
    system = ctx.config.get("system")
    if isinstance(system, str) and system.strip():
        sent.append({"type": "message", "role": "system", "text": system, "t": 0.0})
    if not harness.echoes_prompt:
        sent.append({"type": "message", "role": "user", "text": prompt, "t": 0.0})
    return sent


# --- in the sandbox ---


def setting_of(ctx: BuiltinContext) -> Setting:
    """The `sandbox:` setting of the Config, then the Task's (smevals.proc.setting)."""
    from smevals.proc.setting import Setting

    try:
        setting = Setting.merged(ctx.config.get("sandbox"), ctx.task.get("sandbox"))
    except ValueError as error:
        raise RunFailed(str(error), failure="launch") from None
    if setting.backend in ("docker", "podman"):
        raise RunFailed(f"sandbox: backend {setting.backend!r} is not supported by the harness "
                        "runners (the harness and its home are on this machine): use auto, "
                        "bwrap, unshare or none", failure="launch")
    if setting.read_only:
        raise RunFailed("sandbox: read_only is not supported by the harness runners (a "
                        "harness writes its private home, outside the workspace)",
                        failure="launch")
    return setting


def stream_cap(ctx: BuiltinContext) -> int:
    """Bytes of the harness's stdout (its events) and of its stderr read, each."""
    value = ctx.config.get("max_output_bytes")
    return value if isinstance(value, int) and value > 0 else STREAM_CAP


def policy(ctx: BuiltinContext, setting: Setting, env: dict[str, str],
           watch: LineWatch | None = None) -> Policy:
    """How the harness runs: the setting's containment and limits, with the network on
    unless a `sandbox:` says `network: false` (a harness must reach its model), more address
    space and processes than other code (a Node.js harness reserves gigabytes it never
    uses, and runs threads, shells and tests), a deadline even without `timeout`, and the
    idle deadline (`idle_timeout`) watched on its events."""
    from smevals.proc.sandbox import Policy

    layers = [layer for layer in (ctx.config.get("sandbox"), ctx.task.get("sandbox"))
              if isinstance(layer, Mapping)]
    given = {key for layer in layers for key in layer}
    network = setting.network if "network" in given else True
    processes = setting.processes if "processes" in given else PROCESSES
    return Policy(ctx.timeout or DEFAULT_TIMEOUT, env, memory_mb=setting.memory_mb or MEMORY_MB,
                  cap=stream_cap(ctx), network=network, processes=processes,
                  file_mb=setting.file_mb, backend=setting.backend, require=setting.require,
                  idle=idle_timeout(ctx.config), watch=watch)


def idle_timeout(config: Mapping[str, Any]) -> float:
    value = config.get("idle_timeout")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        and value > 0 else DEFAULT_IDLE


def _contained(rules: Policy) -> bool:
    """Whether smevals' sandbox will hide the harness's processes (a containment other
    than `none`): then a harness's own sandbox, which cannot nest in it, is off."""
    from smevals.proc.sandbox import SandboxRefused, describe

    try:
        return describe(rules) != "none"
    except SandboxRefused as refused:
        raise RunFailed(refused.reason, failure="launch") from None


def _launch(argv: list[str], ctx: BuiltinContext, rules: Policy) -> Outcome:
    """Start a harness program (the one place that does): host paths throughout."""
    from smevals.proc.sandbox import SandboxRefused, run_sandboxed

    try:
        return run_sandboxed(argv, ctx.workspace, rules, ctx.children)
    except SandboxRefused as refused:
        raise RunFailed(refused.reason, failure="launch") from None


def _ask(argv: list[str], ctx: BuiltinContext,
         rules: Policy) -> tuple[int | None, bytes, bytes, str | None]:
    """`argv` (the harness's `--version`) run as the harness runs, briefly."""
    asked = replace(rules, timeout=min(ASK_TIMEOUT, rules.timeout), idle=None, watch=None,
                    cap=64 * 1024)
    out = _launch(argv, ctx, asked)
    why = out.error or ("timed out" if out.timed_out else None)
    return out.exit_code, out.stdout, out.stderr, why


def _outcome(harness: Harness, ctx: BuiltinContext, child: Outcome, read: Collector,
             notes: list[str], seconds: float) -> BuiltinOutcome:
    usage = dict(read.usage)
    usage.setdefault("duration_ms", round(seconds * 1000))
    usage["tool_calls"] = usage_calls(read.entries)
    usage["sandbox"] = child.sandbox
    err = _quiet(harness, child.stderr[:STDERR_CAP].decode("utf-8", "replace"))
    stderr = err + ("" if not err or err.endswith("\n") else "\n")
    stderr += "".join(f"{note}\n" for note in notes)
    kind, reason, code = verdict(child, read, ctx)
    if kind is None:
        return BuiltinOutcome(stdout=read.final, stderr=stderr, usage=usage)
    if kind == "exit" and child.exit_code and not read.failure:
        reason += _stderr_tail(err)
    return BuiltinOutcome(stdout=read.final, stderr=f"{stderr}{harness.prefix}: {reason}\n",
                          exit_code=code, usage=usage, failure=kind)


def _quiet(harness: Harness, err: str) -> str:
    """The harness's stderr without the lines it prints on every Run (`Harness.noise`)."""
    if not harness.noise or not err:
        return err
    lines = err.splitlines(keepends=True)
    return "".join(line for line in lines if not line.strip().startswith(harness.noise))


def verdict(child: Outcome, read: Collector, ctx: BuiltinContext) -> tuple[str | None, str, int]:
    """(failure kind or None, reason, exit code) of the Run, first cause first."""
    code = child.exit_code
    if ctx.cancel.is_set():
        return "exit", "cancelled", 130
    if child.error is not None:
        return "launch", child.error, 1
    if child.timed_out:
        return "timeout", f"timed out after {ctx.timeout or DEFAULT_TIMEOUT:g} s", 1
    if child.idle:
        last = f" (its last word: {read.notes[-1]})" if read.notes else ""
        return "timeout", (f"no event from the harness for {idle_timeout(ctx.config):g} s "
                           f"(idle_timeout){last}: it was stopped"), 1
    if child.over_cap:
        return "exit", (f"the harness wrote more than {stream_cap(ctx)} bytes on "
                        f"{' and '.join(child.over_cap)}: it was stopped"), 1
    if read.failure is not None:
        return "exit", f"the harness reported a failure: {read.failure}", code or 1
    if code is not None and code < 0:
        return "signal", f"the harness was killed by {_signal(-code)}", 1
    if code:
        return "exit", f"the harness exited with {code}", code
    if not read.ended:
        return "exit", ("the event stream is truncated: it ended before the harness's last "
                        "event"), 1
    return None, "", 0


def _signal(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _stderr_tail(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.strip()][-SHOWN_STDERR:]
    return f" (its stderr ends: {' | '.join(lines)})" if lines else ""
