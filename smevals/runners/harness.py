"""What the harness runners (`smevals:codex`, `smevals:claude-code`, `smevals:pi`) share:
their config keys, finding the harness, its private home, its environment, running it in
the Run's workspace, and turning its event stream into the Run (runners/events.py).

A harness runs as a child process (smevals.proc): its own session, stdin closed, the Run's
deadline, every process it started killed at its end, Ctrl-C ending it at once. It sees
only an allow-listed environment (smevals.proc.sandbox.sandbox_env) plus the variables the
config names in `env:`, and a home of its own for the Run (HOME and the harness's own
variable, e.g. CODEX_HOME), made empty in the temporary folder and removed afterwards: no
session, setting or credential of the user's is read or written.
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals.runners.base import BuiltinContext, BuiltinOutcome, Problems, RunFailed
from smevals.runners.events import Collector, Reader, read_stream, usage_calls
from smevals.runners.options import ENV_NAME, config_problems_for, options_schema
from smevals.schemas import Schema
from smevals.store import transcript

if TYPE_CHECKING:
    from smevals.proc.sandbox import Outcome, Policy
    from smevals.proc.setting import Setting

STREAM_CAP = 64 * 1024 * 1024   # bytes of its stream read (`max_output_bytes`); stopped past it
STDERR_CAP = 1024 * 1024        # bytes of the harness's stderr kept
SHOWN_STDERR = 5                # last lines of its stderr quoted in a failure's reason
DEFAULT_MODEL = "default"       # `model: default`: the harness's own default model
DEFAULT_TIMEOUT = 3600.0        # seconds a harness may run when the Run has no `timeout`
MEMORY_MB = 32768               # its address space (RLIMIT_AS) unless `sandbox.memory_mb`
PROCESSES = 256                 # processes and threads it may add unless `sandbox.processes`

ARG: dict[str, Any] = {"type": "string", "not": {"type": "string", "pattern": "\x00"},
                       "x-problem": {"not": "must not contain a NUL byte"}}
COMMON: dict[str, Any] = {
    "sandbox": True,        # the `sandbox:` setting of every Config (config.schema.json)
    "max_output_bytes": {"type": "integer", "exclusiveMinimum": 0},
    "executable": {**ARG, "pattern": r"\S"},
    "args": {"type": "array", "items": ARG},
    "env": {"type": "array", "items": ENV_NAME},
}
TOOLS: dict[str, Any] = {"type": "array", "items": {**ARG, "pattern": r"\S"}}


@dataclass(frozen=True)
class Harness:
    """One harness: how to call it and how to read it."""

    name: str                                    # smevals:NAME
    program: str                                 # the executable's usual name
    package: str                                 # what to install (npm)
    home: Callable[[Path], dict[str, str]]       # its own variables for a private home
    options: Callable[[BuiltinContext], list[str]]     # its arguments before the config's
    prompt: Callable[[BuiltinContext, str], list[str]]  # how the prompt ends the command line
    reader: Callable[[], Reader]
    schema: Schema
    echoes_prompt: bool = False                  # its stream starts with the user's message

    @property
    def prefix(self) -> str:
        return f"smevals:{self.name}"


def schema(properties: dict[str, Any]) -> Schema:
    """A harness's config keys: the common ones (executable, args, env) and its own."""
    return options_schema({**COMMON, **properties})


def config_problems(harness: Harness, config: Mapping[str, Any]) -> Problems:
    return config_problems_for(harness.name, config, harness.schema)


# --- finding the harness ---


def find_executable(harness: Harness, config: Mapping[str, Any], config_dir: Path,
                    environ: Mapping[str, str]) -> tuple[str | None, str]:
    """(the path to run, "") or (None, why it cannot be run, naming what to install)."""
    given, search = config.get("executable"), environ.get("PATH", os.defpath)
    if isinstance(given, str) and given.strip():
        return _given(given, config_dir, search)
    found = shutil.which(harness.program, path=search)
    if found is not None:
        return found, ""
    return None, (f"{harness.prefix}: `{harness.program}` is not installed (not found on "
                  f"PATH); install it with `npm i -g {harness.package}`, or set "
                  f"`executable:` in the config to its path")


def _given(given: str, config_dir: Path, search: str) -> tuple[str | None, str]:
    """`executable:` as a path (relative to the config's folder) or a name on PATH."""
    path = Path(os.path.expanduser(given))
    if "/" not in given:
        found = shutil.which(given, path=search)
        return (found, "") if found else (None, f"executable {given!r}: not found on PATH")
    path = path if path.is_absolute() else (config_dir / path).absolute()
    if not path.is_file():
        return None, f"executable {given!r}: no such file ({path})"
    if not os.access(path, os.X_OK):
        return None, f"executable {given!r}: not executable ({path})"
    return str(path), ""


def preflight(harness: Harness, config: Mapping[str, Any], config_dir: Path,
              environ: Mapping[str, str]) -> str | None:
    """Why no Run of this config can start here (the harness is missing), else None."""
    why = find_executable(harness, config, config_dir, environ)[1]
    return None if not why else why if why.startswith(harness.prefix) \
        else f"{harness.prefix}: {why}"


# --- the harness's world: prompt, home, environment ---


def task_prompt(ctx: BuiltinContext, harness: Harness) -> str:
    prompt = ctx.task.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise RunFailed(f"task {ctx.task.get('name')!r} needs a non-empty string `prompt` "
                        f"for {harness.prefix} (`messages` are not supported)", failure="launch")
    return prompt


def model_of(ctx: BuiltinContext) -> str | None:
    """The model to pass, or None for the harness's own default (`model: default`)."""
    return None if not ctx.model or ctx.model == DEFAULT_MODEL else ctx.model


@contextmanager
def private_home() -> Iterator[Path]:
    """An empty folder only this Run uses as the harness's home, removed at the end."""
    home = Path(tempfile.mkdtemp(prefix="smevals-harness-"))
    try:
        yield home
    finally:
        _remove(home)


def _remove(path: Path) -> None:
    def writable(func: Callable[..., Any], name: str, _exc: Any) -> None:
        try:
            os.chmod(os.path.dirname(name), stat.S_IRWXU)
            func(name)
        except OSError:
            pass
    shutil.rmtree(path, onerror=writable)


def environment(ctx: BuiltinContext, harness: Harness, home: Path,
                passed: tuple[str, ...] = ()) -> tuple[dict[str, str], list[str]]:
    """The harness's environment (the sandbox's allow-list, the names a `sandbox:` setting
    passes, the names in `env:`), and the names in `env:` that are not set."""
    from smevals.proc.sandbox import sandbox_env

    env = sandbox_env(ctx.environ, home, passed)
    for key in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        env[key] = str(home / key.removeprefix("XDG_").removesuffix("_HOME").lower())
    missing = []
    for name in ctx.config.get("env") or []:
        if name in ctx.environ:
            env[name] = ctx.environ[name]
        else:
            missing.append(name)
    env.update(harness.home(home))
    return env, missing


def folder(path: Path) -> str:
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


# --- running it ---


def run(harness: Harness, ctx: BuiltinContext) -> BuiltinOutcome:
    if problems := config_problems(harness, ctx.config):
        text = "; ".join(f"{key}: {message}" for key, message in problems)
        raise RunFailed(f"bad config: {text}", failure="launch")
    prompt = task_prompt(ctx, harness)
    program, why = find_executable(harness, ctx.config, ctx.config_dir, ctx.environ)
    if program is None:
        raise RunFailed(why.removeprefix(harness.prefix + ": "), failure="launch")
    argv = [program, *harness.options(ctx), *(ctx.config.get("args") or []),
            *harness.prompt(ctx, prompt)]
    setting = _setting(ctx)
    start = time.monotonic()
    with private_home() as home:
        env, missing = environment(ctx, harness, home, setting.env)
        child = _launch(argv, ctx, policy(ctx, setting, env))
    seconds = time.monotonic() - start
    read = read_stream(child.stdout, harness.reader())
    left = keep_transcript(ctx.workspace, _sent(ctx, harness, prompt) + read.entries)
    notes = [f"{harness.prefix}: env: {name} is not set, so not passed" for name in missing]
    if left is not None:
        notes.append(f"{harness.prefix}: the harness left {left} as {transcript.NAME}: "
                     f"removed, never followed, and replaced by smevals' transcript")
    return _outcome(harness, ctx, child, read, notes, seconds)


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
        sent.append({"type": "message", "role": "system", "text": system})
    if not harness.echoes_prompt:
        sent.append({"type": "message", "role": "user", "text": prompt})
    return sent


# --- in the sandbox ---


def _setting(ctx: BuiltinContext) -> Setting:
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
    if setting.read_only and setting.view == "host":
        raise RunFailed("sandbox: read_only is not supported by the harness runners with "
                        "view: host (a harness writes its private home, outside the "
                        "workspace)", failure="launch")
    return setting


def policy(ctx: BuiltinContext, setting: Setting, env: dict[str, str]) -> Policy:
    """How the harness runs: the setting's containment and limits, with the network on
    unless a `sandbox:` says `network: false` (a harness must reach its model), more address
    space and processes than other code (a Node.js harness reserves gigabytes it never
    uses, and runs threads, shells and tests), and a deadline even without `timeout`. In
    its own view of the filesystem (unless `view: host`), the harness's executable is
    shown by its real path (its npm package folder too) and `node` with it."""
    from smevals.proc.sandbox import Policy

    layers = [layer for layer in (ctx.config.get("sandbox"), ctx.task.get("sandbox"))
              if isinstance(layer, Mapping)]
    given = {key for layer in layers for key in layer}
    network = setting.network if "network" in given else True
    processes = setting.processes if "processes" in given else PROCESSES
    return Policy(ctx.timeout or DEFAULT_TIMEOUT, env, memory_mb=setting.memory_mb or MEMORY_MB,
                  cap=stream_cap(ctx), network=network, processes=processes,
                  file_mb=setting.file_mb, backend=setting.backend, require=setting.require,
                  view=setting.view, expose=setting.expose, programs=("node",))


def stream_cap(ctx: BuiltinContext) -> int:
    """Bytes of the harness's stdout (its events) and of its stderr read, each."""
    value = ctx.config.get("max_output_bytes")
    return value if isinstance(value, int) and value > 0 else STREAM_CAP


def _launch(argv: list[str], ctx: BuiltinContext, rules: Policy) -> Outcome:
    from smevals.proc.sandbox import SandboxRefused, run_sandboxed

    try:
        return run_sandboxed(argv, ctx.workspace, rules, ctx.children)
    except SandboxRefused as refused:
        raise RunFailed(refused.reason, failure="launch") from None


def _outcome(harness: Harness, ctx: BuiltinContext, child: Outcome, read: Collector,
             notes: list[str], seconds: float) -> BuiltinOutcome:
    usage = dict(read.usage)
    usage.setdefault("duration_ms", round(seconds * 1000))
    usage["tool_calls"] = usage_calls(read.entries)
    usage["sandbox"] = child.sandbox
    err = child.stderr[:STDERR_CAP].decode("utf-8", "replace")
    stderr = err + ("" if not err or err.endswith("\n") else "\n")
    stderr += "".join(f"{note}\n" for note in notes)
    kind, reason, code = verdict(child, read, ctx)
    if kind is None:
        return BuiltinOutcome(stdout=read.final, stderr=stderr, usage=usage)
    if kind == "exit" and child.exit_code and not read.failure:
        reason += _stderr_tail(err)
    return BuiltinOutcome(stdout=read.final, stderr=f"{stderr}{harness.prefix}: {reason}\n",
                          exit_code=code, usage=usage, failure=kind)


def verdict(child: Outcome, read: Collector, ctx: BuiltinContext) -> tuple[str | None, str, int]:
    """(failure kind or None, reason, exit code) of the Run, first cause first."""
    code = child.exit_code
    if ctx.cancel.is_set():
        return "exit", "cancelled", 130
    if child.error is not None:
        return "launch", child.error, 1
    if child.timed_out:
        return "timeout", f"timed out after {ctx.timeout or DEFAULT_TIMEOUT:g} s", 1
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

