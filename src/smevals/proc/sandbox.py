"""Run code nobody reviewed (`match_output`, the `command` checker, an agent's tools, a
harness) with what containment the platform allows: one sandbox for all of them.

Through `smevals.proc`: its own session, stdin closed, a wall-clock deadline, every
descendant killed at the end (also those that left the session), each stream capped while
read. On top of that, for code nobody reviewed:

- its own view of the filesystem, built deny-by-default (`view: private`, the default;
  smevals.proc.view): the system's runtime folders and the Python smevals runs,
  read-only; the workspace writable at /workspace (its working folder) and its home at
  /home/sandbox; a private /tmp, /dev and /proc; what the Policy adds (`expose`, read-only;
  `binds`, e.g. a writable folder for a report; `programs`, e.g. `node` for a harness; the
  program of argv itself). Nothing else exists in it: not the Eval folder, the store, the
  host's /tmp, /home, /root or /run, nor any Unix socket of the host. Callers pass host
  paths: argv and the environment are translated (`View.translate`), and `inside` gives a
  host path's path in the view. Where the machine cannot build the view the code is
  refused, never run with the host visible, unless the Policy says `view="host"`;
- a scrubbed environment: only the variables in ALLOWED_ENV (and LC_*, and the names a
  setting lists) pass, so no API key or token reaches the code; HOME and TMPDIR point into
  its private folder (`private.private_copy` makes one from a folder, links left out);
- limits set before exec: RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE (`file_mb`), RLIMIT_NPROC
  (`processes` more than the user already runs; the kernel does not apply it to root);
- no network (unless `network`) and no other process in sight (its own network and PID
  namespaces, a private /proc, no capabilities), by the backend the Policy names or the
  strongest the machine allows: see `smevals.proc.contain`, and `smevals.proc.container`
  for docker and podman. `describe` names the containment, as Runs (`usage.sandbox`)
  and Checks (`details.sandbox`) record it. A backend named but not available here, a
  view it cannot build, or `require` where the machine cannot hide the network and the
  processes, is refused (SandboxRefused, never a weaker run). Where no PID namespace can
  be made and smevals' environment holds a variable that looks like a secret, the program
  is not run unless SMEVALS_ALLOW_UNCONTAINED=1 says to run it anyway: it could read
  smevals' environment from /proc (docs/decisions.md).

The private folder is the caller's (see checkers/program.py). POSIX only.

`run_sandboxed(argv, cwd, policy)` is the entry point: `Policy` says the deadline, the
limits, the environment and what the code may reach. `SandboxRefused` is raised when the
code may not run here (see `choose`, `refusal`); a checker turns it into an errored
Check, a runner into a failed Run, and `run`/`grade` check the settings (`describe`)
before they start.
"""

from __future__ import annotations

import math
import os
import shutil
import signal
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from smevals.proc import container
from smevals.proc.child import Children, Limits, Spec, run_child
from smevals.proc.contain import (
    BACKENDS,
    CONTAINERS,
    RO_TOOL,
    Containment,
    available,
    find,
    probe_failure,
    secret_names,
)
from smevals.proc.limits import prlimit_prefix
from smevals.proc.policy import MIB, VIEWS, Policy
from smevals.proc.view import HOME, WORKSPACE, Bind, View, ViewError, build

__all__ = ["ALLOWED_ENV", "BACKENDS", "HOME", "WORKSPACE", "Bind", "Outcome", "SandboxRefused",
           "choose", "describe", "inside", "run_sandboxed", "sandbox_env"]

ALLOWED_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM", "SOURCE_DATE_EPOCH")
ALLOW_UNCONTAINED = "SMEVALS_ALLOW_UNCONTAINED"
EXIT_WRAPPER = 125          # the view or the read-only step could not make the mounts (said)
VIEW_TOOL = "smevals-view"  # smevals.proc.mountns.TOOL (not imported: it loads ctypes)


class SandboxRefused(Exception):
    """The code may not run here (why in `reason`); `sandbox` names the containment found."""

    def __init__(self, reason: str, sandbox: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.sandbox = sandbox


@dataclass
class Outcome:
    exit_code: int | None = None
    timed_out: bool = False
    stdout: bytes = b""
    stderr: bytes = b""
    over_cap: list[str] = field(default_factory=list)
    error: str | None = None
    sandbox: str = "none"               # the containment used: see `describe`
    leftovers: int = 0                  # other processes of its tree found at the end
    idle: bool = False                  # stopped after `Policy.idle` seconds without activity

    def why(self, policy: Policy) -> str | None:
        """What went wrong, in words for a record (None when nothing did): it could not
        start, its deadline, the output cap, a signal (a limit's named), its exit code,
        and the processes it left running (killed)."""
        said = [self.error] if self.error else []
        if self.timed_out:
            said.append(f"timed out after {policy.timeout:g} s (every process it started "
                        f"was killed)")
        elif self.over_cap:
            said.append(f"{' and '.join(self.over_cap)} passed the output cap of "
                        f"{policy.cap} bytes (stopped)")
        elif self.exit_code is not None and self.exit_code < 0:
            said.append(_killed(-self.exit_code, policy))
        elif self.exit_code and not self.error:
            said.append(f"exited with code {self.exit_code}")
        if self.leftovers and not (self.timed_out or self.over_cap):
            said.append(f"left {self.leftovers} process{'es' if self.leftovers > 1 else ''} "
                        f"running at its end (killed)")
        return "; ".join(said) or None


def _killed(number: int, policy: Policy) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"killed by signal {number}"
    limit = {"SIGXFSZ": f": a file reached the size limit of {policy.file_mb} MiB",
             "SIGXCPU": ": it used up its CPU time"}.get(name, "")
    return f"killed by {name}{limit}"


def sandbox_env(environ: Mapping[str, str], home: Path,
                names: Iterable[str] = ()) -> dict[str, str]:
    """The allow-listed part of `environ` (ALLOWED_ENV, LC_*, and `names`: the variables
    a setting lets through), with HOME and the temporary folder in `home`."""
    extra = set(names)
    env = {k: v for k, v in environ.items()
           if k in ALLOWED_ENV or k.startswith("LC_") or k in extra}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    for key in ("HOME", "TMPDIR", "TMP", "TEMP"):
        env[key] = str(home)
    return env


def choose(policy: Policy) -> Containment:
    """The containment `policy` gets here; SandboxRefused when its backend cannot be used
    here, cannot build its view, or it requires more than the machine gives (the reason
    names what it has)."""
    if policy.view not in VIEWS:
        raise SandboxRefused(f"sandbox: view {policy.view!r}: one of {', '.join(VIEWS)}",
                             "none")
    private = policy.view == "private" and policy.backend not in CONTAINERS
    read_only = policy.read_only and not private
    box = find(policy.backend, policy.network, read_only)
    if box is None and read_only and find(policy.backend, policy.network) is not None:
        raise SandboxRefused(
            f"sandbox: read_only: true asks for everything but the program's folder to be "
            f"read-only, and {policy.backend!r} cannot make a mount namespace here; this "
            f"machine gives: {', '.join(available())}", "none")
    if box is None:
        raise SandboxRefused(
            f"sandbox: backend {policy.backend!r} cannot be used here "
            f"({_missing(policy.backend)}); this machine gives: {', '.join(available())}",
            "none")
    _require(policy, box)
    if private:
        box = find(policy.backend, policy.network, view=True) or _no_view(policy)
        _require(policy, box)
    return box


def _require(policy: Policy, box: Containment) -> None:
    if policy.require and not (box.processes and (box.network or policy.network)):
        hidden = "other processes" if policy.network else "the network and other processes"
        raise SandboxRefused(
            f"sandbox: require: true asks for {hidden} to be hidden, and the strongest "
            f"containment here is {box.name!r}; this machine gives: "
            f"{', '.join(available())}", box.name)


def _no_view(policy: Policy) -> Containment:
    why = "it makes no namespace" if policy.backend == "none" else (
        probe_failure(policy.backend, policy.network) or "no way of it works here")
    raise SandboxRefused(
        f"sandbox: backend {policy.backend!r} cannot build the program's own view of the "
        f"filesystem here ({why}), so it would see every file of the machine; this machine "
        f"gives: {', '.join(available())}; `view: host` runs it with the machine's files "
        f"in sight", "none")


def describe(policy: Policy) -> str:
    """What contains code run under `policy` here, as Runs (`usage.sandbox`) and Checks
    (`details.sandbox`) record it: `bwrap`, `unshare`, `unshare --map-root-user`, one of
    those with `, network only` (no PID namespace) or `, network allowed`, `docker
    (IMAGE)`, `podman (IMAGE)`; then `, exposing PATH, ...` for what `expose` shows, or,
    with `view: host`, `, read-only` and `, host view` (`none, host view`: nothing
    contains it). SandboxRefused where it would be refused."""
    return _name(choose(policy), policy)


def _name(box: Containment, policy: Policy) -> str:
    name = f"{box.name} ({policy.image})" if box.container else box.name
    if not box.view:
        return f"{name}, host view"
    if policy.expose:
        name += ", exposing " + ", ".join(os.path.abspath(path) for path in policy.expose)
    return name


def inside(policy: Policy, cwd: Path, path: str | os.PathLike[str]) -> str:
    """Where the program run in `cwd` under `policy` finds the host path `path` (in its
    folder: below /workspace with a private view or a container; the same path on the
    host's filesystem); a path outside its folder is returned as it is."""
    if policy.view == "host" and policy.backend not in CONTAINERS:
        return os.fspath(path)
    text, folder = os.path.abspath(path), os.path.realpath(cwd)
    for base in dict.fromkeys((os.path.abspath(cwd), folder)):
        if text == base or text.startswith(base.rstrip("/") + "/"):
            return WORKSPACE + text[len(base):]
    real = os.path.realpath(text)
    if real == folder or real.startswith(folder.rstrip("/") + "/"):
        return WORKSPACE + real[len(folder):]
    return text


def _missing(backend: str) -> str:
    if backend not in BACKENDS:
        return f"unknown: one of {', '.join(BACKENDS)}"
    tool = shutil.which(backend, path=os.environ.get("PATH"))
    if tool is None:
        return f"{backend} is not installed"
    if backend in CONTAINERS:
        return f"{tool} info failed: its daemon does not answer"
    return f"{backend} cannot make the namespaces here"


def refusal(environ: Mapping[str, str], env: Mapping[str, str], box: Containment) -> str | None:
    """Why the program may not run under `box`: it could read smevals' environment from
    /proc, and that holds secrets (unless ALLOW_UNCONTAINED is 1); None when it may."""
    if box.processes or environ.get(ALLOW_UNCONTAINED) == "1":
        return None
    names = secret_names(environ, env)
    if not names:
        return None
    return (f"not run: no PID namespace can be made here, so the program could read "
            f"smevals' environment, which holds {', '.join(names)} (see docs/security.md); "
            f"unset them, or set {ALLOW_UNCONTAINED}=1 to run it anyway")


def run_sandboxed(argv: list[str], cwd: Path, policy: Policy,
                  children: Children | None = None) -> Outcome:
    """Run `argv` in `cwd` under `policy`; never raises for the program's failures
    (SandboxRefused when it may not run here: see `choose` and `refusal`, or when its
    view cannot be built). `children`: the command's live children, so Ctrl-C and SIGTERM
    end this one at once too."""
    box = choose(policy)
    env = dict(policy.env)
    why = refusal(os.environ, env, box)
    if why is not None:
        raise SandboxRefused(why, box.name)
    home = Path(env["HOME"]) if os.path.isdir(env.get("HOME", "")) else cwd
    if box.container:
        return _run_container(box, argv, cwd, home, policy, children)
    limits = Limits(cpu_seconds=math.ceil(policy.timeout) + 1,
                    memory_bytes=policy.memory_mb * MIB,
                    file_bytes=policy.file_mb * MIB, processes=policy.processes,
                    core_dumps=False)
    layout = _layout(box, argv, cwd, home, policy) if box.view else None
    if layout is not None:
        argv, env = layout.argv(argv), layout.env(env)
    command, prepare = box.wrap(argv, cwd, home, layout), box.prepare(layout)
    prefix = prlimit_prefix(limits) if box.backend == "bwrap" and prepare is None else None
    if prefix is not None:              # no fork of smevals: bwrap dies with its parent
        command, limits = [*prefix, *command], Limits()
    spec = Spec(command, cwd, env, timeout=policy.timeout, cap=policy.cap, limits=limits,
                stop_at_cap=True, prepare=prepare, idle=policy.idle, watch=policy.watch)
    res = run_child(spec, children)
    over = [name for name, c in (("stdout", res.stdout), ("stderr", res.stderr)) if c.truncated]
    error = res.error or _wrapper_error(box.tools, argv[0], res.exit_code, res.stderr.data)
    return Outcome(res.exit_code, res.timed_out, res.stdout.data, res.stderr.data, over, error,
                   _name(box, policy), res.leftovers, idle=res.idle)


def _layout(box: Containment, argv: list[str], cwd: Path, home: Path,
            policy: Policy) -> View:
    """The program's view (smevals.proc.view); SandboxRefused when it cannot be built."""
    folders = [os.path.realpath(cwd), os.path.realpath(home)]
    programs = [*policy.programs, *(p for p in box.prefix if p.startswith("/"))]
    if argv and os.path.isabs(argv[0]) and not any(
            os.path.realpath(argv[0]).startswith(f.rstrip("/") + "/") for f in folders):
        programs.append(argv[0])
    try:
        return build(cwd, None if home == cwd else home, expose=policy.expose,
                     extra=policy.binds, programs=programs, network=policy.network,
                     proc=box.processes, search=policy.env.get("PATH", ""))
    except ViewError as error:
        raise SandboxRefused(f"sandbox: the program's view cannot be built: {error}",
                             _name(box, policy)) from None


def _run_container(box: Containment, argv: list[str], cwd: Path, home: Path, policy: Policy,
                   children: Children | None = None) -> Outcome:
    """`argv` in a throw-away container (smevals.proc.container); the container is removed
    when the client had to be stopped (deadline, cap) and may have left it running."""
    path, name = box.prefix[0], container.new_name()
    try:
        mapping = container.view(cwd, home, policy)
    except ViewError as problem:
        raise SandboxRefused(f"sandbox: the program's view cannot be built: {problem}",
                             _name(box, policy)) from None
    env = mapping.env(policy.env)
    client = container.client_env(env, os.environ)
    spec = Spec(container.command(box.backend, path, mapping.argv(argv), cwd, policy, name,
                                  home), cwd, client,
                timeout=policy.timeout, cap=policy.cap, stop_at_cap=True)
    res = run_child(spec, children)
    timed_out = res.timed_out
    if timed_out or res.over_cap or (res.exit_code or 0) < 0:
        container.remove(path, name, client)
    over = [n for n, c in (("stdout", res.stdout), ("stderr", res.stderr)) if c.truncated]
    error = res.error
    if error is None and res.exit_code == container.EXIT_RUNTIME:
        line = res.stderr.data.decode("utf-8", "replace").strip().partition("\n")[0]
        error = f"the container could not start: {line}"
    return Outcome(res.exit_code, timed_out, res.stdout.data, res.stderr.data, over, error,
                   _name(box, policy), res.leftovers)


def _wrapper_error(tools: list[str], program: str, code: int | None,
                   stderr: bytes) -> str | None:
    """Why the program could not start, when a tool of the containment says it could not
    exec it (`setpriv: failed to execute X: ...`, 127; `bwrap: execvp X: ...`, 1)."""
    line = stderr.decode("utf-8", "replace").strip().partition("\n")[0]
    if code == EXIT_WRAPPER and line.startswith((RO_TOOL + ": ", VIEW_TOOL + ": ")):
        return line
    if code not in (1, 126, 127) or program in tools or program not in line:
        return None
    if not any(line.startswith(os.path.basename(t) + ": ") for t in tools):
        return None
    return f"cannot start {program}: {line.rpartition(': ')[2]}"
