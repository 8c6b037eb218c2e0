"""What the harness runners (`smevals:codex`, `smevals:claude-code`, `smevals:pi`) share:
their config keys, finding the harness, its private home and its environment, and running
it in the Run's workspace; turning its event stream into the Run is
runners/harness_outcome.py (the stream's reading: runners/events.py).

A harness runs as a child process (smevals.proc): its own session, stdin closed, the Run's
deadline, every process it started killed at its end, Ctrl-C ending it at once. It sees
only an allow-listed environment (smevals.proc.sandbox.sandbox_env) plus the variables the
config names in `env:`, and a home of its own for the Run (HOME, TMPDIR and the harness's
own variable, e.g. CODEX_HOME), made empty in the temporary folder and removed afterwards:
no session, setting or credential of the user's is read or written. Each harness's
`prepare` turns the Config (its model server: runners/server.py, its retries, smevals'
sandbox) into the options, variables and files it reads.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals.runners import server
from smevals.runners.base import BuiltinContext, BuiltinOutcome, Problems, RunFailed
from smevals.runners.events import Event, Reader
from smevals.runners.options import ENV_NAME, config_problems_for, options_schema
from smevals.runners.server import Server, server_of
from smevals.runners.versions import ASK_TIMEOUT, version_of
from smevals.runners.watch import LineWatch
from smevals.schemas import Schema

if TYPE_CHECKING:
    from smevals.proc.policy import Policy
    from smevals.proc.sandbox import Outcome
    from smevals.proc.setting import Setting

STREAM_CAP = 64 * 1024 * 1024   # bytes of its stream read (`max_output_bytes`); stopped past it
STDERR_CAP = 1024 * 1024        # bytes of the harness's stderr kept
SHOWN_STDERR = 5                # last lines of its stderr quoted in a failure's reason
DEFAULT_MODEL = "default"       # `model: default`: the harness's own default model
DEFAULT_TIMEOUT = 3600.0        # seconds a harness may run when the Run has no `timeout`
DEFAULT_IDLE = 300.0            # seconds without an event before the harness is stopped
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
    **server.KEYS,
    "idle_timeout": {"type": "number", "exclusiveMinimum": 0},
    "max_retries": {"type": "integer", "minimum": 0, "maximum": 100},
}
TOOLS: dict[str, Any] = {"type": "array", "items": {**ARG, "pattern": r"\S"}}


@dataclass
class Launch:
    """One Run of a harness as its `prepare` sees it, and what `prepare` adds to it."""

    ctx: BuiltinContext
    home: Path                          # its private home (its own variables point into it)
    env: dict[str, str]                 # its environment: `prepare` may add to it
    server: Server | None               # the model server the Config names, if any
    contained: bool                     # smevals' sandbox hides its processes (not `none`)
    own_sandbox: str = ""               # the harness's own sandbox, for the record
    notes: list[str] = field(default_factory=list)     # said in stderr.txt

    def pass_key(self) -> None:
        """The server's key, under its own variable's name (for a harness that reads the
        name from its settings)."""
        server = self.server
        if server is None or server.key_env is None:
            return
        if server.key:
            self.env[server.key_env] = server.key
        else:
            self.notes.append(f"api_key_env: {server.key_env} is not set, so no key is sent")

    @property
    def config(self) -> Mapping[str, Any]:
        return self.ctx.config

    def given(self, key: str) -> Any:
        return self.ctx.config.get(key)


def _never(_event: Event) -> bool:
    return False


@dataclass(frozen=True)
class Harness:
    """One harness: how to call it and how to read it."""

    name: str                                    # smevals:NAME
    program: str                                 # the executable's usual name
    package: str                                 # what to install (npm)
    home: Callable[[Path], dict[str, str]]       # its own variables for a private home
    prepare: Callable[[Launch], list[str]]       # its arguments before the config's (and
                                                 # its variables and files, into the Launch)
    prompt: Callable[[BuiltinContext, str], list[str]]  # how the prompt ends the command line
    reader: Callable[[Mapping[str, Any]], Reader]    # a reader for a Run of this Config
    schema: Schema
    echoes_prompt: bool = False                  # its stream starts with the user's message
    retrying: Callable[[Event], bool] = _never   # an event that only says it retries
    noise: tuple[str, ...] = ()                  # stderr lines it prints every time (left out)
    problems: Callable[[Mapping[str, Any]], Problems] | None = None     # beyond the schema

    @property
    def prefix(self) -> str:
        return f"smevals:{self.name}"

    # The built-in runner's entry points (smevals.runners finds a module's HARNESS).
    def config_problems(self, config: Mapping[str, Any]) -> Problems:
        return config_problems(self, config)

    def preflight(self, config: Mapping[str, Any], config_dir: Path,
                  environ: Mapping[str, str]) -> str | None:
        return preflight(self, config, config_dir, environ)

    def run(self, ctx: BuiltinContext) -> BuiltinOutcome:
        return run(self, ctx)


def schema(properties: dict[str, Any]) -> Schema:
    """A harness's config keys: the common ones (executable, args, env, base_url, ...) and
    its own."""
    return options_schema({**COMMON, **properties})


def config_problems(harness: Harness, config: Mapping[str, Any]) -> Problems:
    """The schema's problems and those it cannot say, in the order of the config's keys."""
    found = config_problems_for(harness.name, config, harness.schema)
    more = server.problems(config) + (harness.problems(config) if harness.problems else [])
    order = {key: i for i, key in enumerate(config)}
    return sorted(found + more, key=lambda p: order.get(p[0].split(".")[0], len(order)))


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


def model_of_server(launch: Launch) -> str:
    """The model a harness asks the Config's own server for (`model: default` names none)."""
    model = model_of(launch.ctx)
    if model is None:
        raise RunFailed(f"base_url {launch.server.base_url if launch.server else ''}: name the "
                        "model the server should run (`model:` or -m), not `default`",
                        failure="launch")
    return model


def max_retries(launch: Launch) -> int | None:
    value = launch.given("max_retries")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


@contextmanager
def private_home() -> Iterator[Path]:
    """An empty folder only this Run uses as the harness's home, removed at the end."""
    home = Path(tempfile.mkdtemp(prefix="smevals-harness-"))
    try:
        yield home
    finally:
        _remove(home)


def _remove(path: Path) -> None:
    def writable(func: Callable[..., Any], name: str, _exc: object) -> None:
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
    temporary = folder(home / "tmp")     # not the home itself: Codex will not put its
    for key in ("TMPDIR", "TMP", "TEMP"):  # helpers in a home under the temporary folder
        env[key] = temporary
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


def write_file(path: Path, text: str) -> None:
    """One of the harness's settings files in its private home (readable by it only)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


# --- running it ---


def run(harness: Harness, ctx: BuiltinContext) -> BuiltinOutcome:
    if problems := config_problems(harness, ctx.config):
        text = "; ".join(f"{key}: {message}" for key, message in problems)
        raise RunFailed(f"bad config: {text}", failure="launch")
    prompt = task_prompt(ctx, harness)
    program, why = find_executable(harness, ctx.config, ctx.config_dir, ctx.environ)
    if program is None:
        raise RunFailed(why.removeprefix(harness.prefix + ": "), failure="launch")
    setting = _setting(ctx)
    watch = LineWatch(harness.retrying)
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
    launch.notes[:0] = [f"env: {name} is not set, so not passed" for name in missing]
    from smevals.runners.harness_outcome import outcome

    return outcome(harness, launch, child, watch, prompt, seconds,
                   {"runner": {"name": harness.prefix, "version": version}})


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


def policy(ctx: BuiltinContext, setting: Setting, env: dict[str, str],
           watch: LineWatch | None = None) -> Policy:
    """How the harness runs: the setting's containment and limits, with the network on
    unless a `sandbox:` says `network: false` (a harness must reach its model), more address
    space and processes than other code (a Node.js harness reserves gigabytes it never
    uses, and runs threads, shells and tests), a deadline even without `timeout`, and the
    idle deadline (`idle_timeout`) watched on its events. In its own view of the filesystem
    (unless `view: host`), the harness's executable is shown by its real path (the npm
    `node_modules` tree it lies in too) and `node` with it."""
    from smevals.proc.policy import Policy

    layers = [layer for layer in (ctx.config.get("sandbox"), ctx.task.get("sandbox"))
              if isinstance(layer, Mapping)]
    given = {key for layer in layers for key in layer}
    network = setting.network if "network" in given else True
    processes = setting.processes if "processes" in given else PROCESSES
    return Policy(ctx.timeout or DEFAULT_TIMEOUT, env, memory_mb=setting.memory_mb or MEMORY_MB,
                  cap=stream_cap(ctx), network=network, processes=processes,
                  file_mb=setting.file_mb, backend=setting.backend, require=setting.require,
                  view=setting.view, expose=setting.expose, programs=("node",),
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
        return not describe(rules).startswith("none")
    except SandboxRefused as refused:
        raise RunFailed(refused.reason, failure="launch") from None


def stream_cap(ctx: BuiltinContext) -> int:
    """Bytes of the harness's stdout (its events) and of its stderr read, each."""
    value = ctx.config.get("max_output_bytes")
    return value if isinstance(value, int) and value > 0 else STREAM_CAP


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
