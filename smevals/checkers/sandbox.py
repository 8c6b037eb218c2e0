"""Run model-written code (`match_output`) with what containment the platform allows.

Through `smevals.proc`: its own session, stdin closed, a wall-clock deadline, every
descendant killed at the end (also those that left the session), each stream capped while
read. On top of that, for code nobody reviewed:

- a scrubbed environment: only the variables in ALLOWED_ENV (and LC_*) pass, so no API
  key or token reaches the code; HOME and TMPDIR point into its private folder;
- limits set before exec: RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE (FILE_CAP), RLIMIT_NPROC
  (PROCESSES more than the user already runs; the kernel does not apply it to root);
- no network when a network namespace can be made: `bwrap --unshare-net` when bubblewrap
  is installed, else `unshare --net` (as root) or `unshare --net --map-root-user` (when
  user namespaces are enabled). Otherwise the code runs with the network (see
  docs/security.md); `network_isolation()` says which.

The private folder is the caller's (see checkers/program.py). POSIX only.
"""

from __future__ import annotations

import functools
import math
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from smevals.proc import Limits, Spec, run_child

ALLOWED_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "TERM", "SOURCE_DATE_EPOCH")
FILE_CAP = 64 * 1024 * 1024
PROCESSES = 64

_NET_WRAPPERS = (
    ("bwrap", ["bwrap", "--unshare-net", "--die-with-parent", "--dev-bind", "/", "/", "--"]),
    ("unshare", ["unshare", "--net", "--"]),
    ("unshare", ["unshare", "--net", "--map-root-user", "--"]),
)


@dataclass
class Outcome:
    exit_code: int | None = None
    timed_out: bool = False
    stdout: bytes = b""
    stderr: bytes = b""
    over_cap: list[str] = field(default_factory=list)
    error: str | None = None


def sandbox_env(environ: Mapping[str, str], home: Path) -> dict[str, str]:
    """The allow-listed part of `environ`, with HOME and the temporary folder in `home`."""
    env = {k: v for k, v in environ.items() if k in ALLOWED_ENV or k.startswith("LC_")}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    for key in ("HOME", "TMPDIR", "TMP", "TEMP"):
        env[key] = str(home)
    return env


@functools.cache
def network_isolation() -> tuple[str, ...]:
    """The command prefix that takes the network away, () when none works here."""
    for tool, prefix in _NET_WRAPPERS:
        if shutil.which(tool) is None:
            continue
        probe = run_child(Spec([*prefix, "true"], Path("/"), dict(os.environ), timeout=10))
        if probe.exit_code == 0:
            return tuple(prefix)
    return ()


def run_limited(argv: list[str], cwd: Path, timeout: float, memory_mb: int, cap: int,
                env: dict[str, str]) -> Outcome:
    """Run `argv` in `cwd` under the limits above; never raises for the program's failures."""
    limits = Limits(cpu_seconds=math.ceil(timeout) + 1, memory_bytes=memory_mb * 1024 * 1024,
                    file_bytes=FILE_CAP, processes=PROCESSES, core_dumps=False)
    spec = Spec([*network_isolation(), *argv], cwd, env, timeout=timeout, cap=cap,
                limits=limits, stop_at_cap=True)
    res = run_child(spec)
    over = [name for name, c in (("stdout", res.stdout), ("stderr", res.stderr)) if c.truncated]
    error = res.error or _wrapper_error(spec.argv[0], argv[0], res.exit_code, res.stderr.data)
    return Outcome(res.exit_code, res.timed_out, res.stdout.data, res.stderr.data, over, error)


def _wrapper_error(wrapper: str, program: str, code: int | None, stderr: bytes) -> str | None:
    """Why the program could not start, when the network wrapper says it could not exec it."""
    name = os.path.basename(wrapper).encode()
    if wrapper == program or code not in (126, 127) or not stderr.startswith(name + b": "):
        return None
    reason = stderr.decode("utf-8", "replace").strip().rpartition(": ")[2]
    return f"cannot start {program}: {reason}"
