"""Run code nobody reviewed (`match_output`, and every later user: the `command` checker,
an agent's tools) with what containment the platform allows: one sandbox for all of them.

Through `smevals.proc`: its own session, stdin closed, a wall-clock deadline, every
descendant killed at the end (also those that left the session), each stream capped while
read. On top of that, for code nobody reviewed:

- a scrubbed environment: only the variables in ALLOWED_ENV (and LC_*) pass, so no API
  key or token reaches the code; HOME and TMPDIR point into its private folder;
- limits set before exec: RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE (FILE_CAP), RLIMIT_NPROC
  (PROCESSES more than the user already runs; the kernel does not apply it to root);
- no network and no other process in sight (its own network and PID namespaces, a private
  /proc, no capabilities) as far as the machine allows: see `smevals.proc.contain`. The
  Check's details name the containment used (`sandbox`). Where no PID namespace can be
  made and smevals' environment holds a variable that looks like a secret, the program is
  not run (the Check is an error) unless SMEVALS_ALLOW_UNCONTAINED=1 says to run it anyway:
  it could read smevals' environment from /proc (docs/decisions.md).

The private folder is the caller's (see checkers/program.py). POSIX only.

`run_sandboxed(argv, cwd, policy)` is the entry point: `Policy` says the deadline, the
limits, the environment and what the code may reach. `SandboxRefused` is raised when the
code may not run here (see `refusal`); a checker turns it into an errored Check, a runner
into a failed Run.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from smevals.proc.child import Limits, Spec, run_child
from smevals.proc.contain import Containment, containment, secret_names

ALLOWED_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM", "SOURCE_DATE_EPOCH")
FILE_CAP = 64 * 1024 * 1024
PROCESSES = 64
ALLOW_UNCONTAINED = "SMEVALS_ALLOW_UNCONTAINED"


class SandboxRefused(Exception):
    """The code may not run here (why in `reason`); `sandbox` names the containment found."""

    def __init__(self, reason: str, sandbox: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.sandbox = sandbox


@dataclass(frozen=True)
class Policy:
    """How one piece of untrusted code runs: its deadline (seconds of wall clock, also the
    CPU limit), memory, output cap (bytes kept per stream; the program is stopped past it),
    environment (already scrubbed: see `sandbox_env`)."""

    timeout: float
    env: Mapping[str, str]
    memory_mb: int = 1024
    cap: int = 1024 * 1024


@dataclass
class Outcome:
    exit_code: int | None = None
    timed_out: bool = False
    stdout: bytes = b""
    stderr: bytes = b""
    over_cap: list[str] = field(default_factory=list)
    error: str | None = None
    sandbox: str = "none"               # the containment used (smevals.proc.contain)


def sandbox_env(environ: Mapping[str, str], home: Path) -> dict[str, str]:
    """The allow-listed part of `environ`, with HOME and the temporary folder in `home`."""
    env = {k: v for k, v in environ.items() if k in ALLOWED_ENV or k.startswith("LC_")}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    for key in ("HOME", "TMPDIR", "TMP", "TEMP"):
        env[key] = str(home)
    return env


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


def run_sandboxed(argv: list[str], cwd: Path, policy: Policy) -> Outcome:
    """Run `argv` in `cwd` under `policy`; never raises for the program's failures
    (SandboxRefused when it may not run here, see `refusal`)."""
    box = containment()
    env = dict(policy.env)
    why = refusal(os.environ, env, box)
    if why is not None:
        raise SandboxRefused(why, box.name)
    limits = Limits(cpu_seconds=math.ceil(policy.timeout) + 1,
                    memory_bytes=policy.memory_mb * 1024 * 1024,
                    file_bytes=FILE_CAP, processes=PROCESSES, core_dumps=False)
    spec = Spec(box.wrap(argv), cwd, env, timeout=policy.timeout, cap=policy.cap,
                limits=limits, stop_at_cap=True)
    res = run_child(spec)
    over = [name for name, c in (("stdout", res.stdout), ("stderr", res.stderr)) if c.truncated]
    error = res.error or _wrapper_error(box.tools, argv[0], res.exit_code, res.stderr.data)
    return Outcome(res.exit_code, res.timed_out, res.stdout.data, res.stderr.data, over, error,
                   box.name)


def _wrapper_error(tools: list[str], program: str, code: int | None,
                   stderr: bytes) -> str | None:
    """Why the program could not start, when a tool of the containment says it could not
    exec it (`setpriv: failed to execute X: ...`, 127; `bwrap: execvp X: ...`, 1)."""
    line = stderr.decode("utf-8", "replace").strip().partition("\n")[0]
    if code not in (1, 126, 127) or program in tools or program not in line:
        return None
    if not any(line.startswith(os.path.basename(t) + ": ") for t in tools):
        return None
    return f"cannot start {program}: {line.rpartition(': ')[2]}"
