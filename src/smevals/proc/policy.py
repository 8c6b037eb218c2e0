"""How one piece of untrusted code runs (`Policy`), with its defaults: what the sandbox
(sandbox.py), the container backends (container.py) and the sandbox setting of an Eval
(setting.py) all read, kept apart so that none of them imports another for it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from smevals.proc.view import Bind

__all__ = ["DEFAULT_IMAGE", "FILE_CAP", "MIB", "PROCESSES", "VIEWS", "Policy"]

VIEWS = ("private", "host")
MIB = 1024 * 1024
FILE_CAP = 64 * MIB
PROCESSES = 64
DEFAULT_IMAGE = "python:3.11-slim"


@dataclass(frozen=True)
class Policy:
    """How one piece of untrusted code runs: its deadline (seconds of wall clock, also the
    CPU limit), memory, output cap (bytes kept per stream; the program is stopped past it),
    environment (already scrubbed: see `sandbox_env`), and what contains it.

    `network`: True keeps the network reachable (a harness that must reach its model);
    the PID namespace, private /proc, dropped capabilities, limits and scrubbed
    environment stay. `processes`: how many processes it may add (RLIMIT_NPROC; a
    container's `--pids-limit`). `file_mb`: the largest file it may write (RLIMIT_FSIZE).
    `backend`: `auto` (the strongest local one: bwrap, else unshare, else none), or one
    of `bwrap`, `unshare`, `docker`, `podman`, `none`; a named backend that cannot be used
    here is refused, never replaced. `require`: refuse rather than run where the network
    (unless allowed) and the other processes cannot both be hidden. `image`: the
    container backends' image.

    `view`: `private` (the default) runs it in its own view of the filesystem
    (smevals.proc.view), refused where none can be built; `host` on the machine's own
    filesystem, where `read_only` makes everything but its folder (the `cwd` of
    `run_sandboxed`) and its home read-only (a mount namespace), or refused (the private
    view and a container always are). With the private view (and a container):
    `expose`, host paths shown read-only at their own paths; `binds`, host folders shown
    at a path of the view (`Bind(source, target, writable)`: e.g.
    `Bind(report_folder, "/smevals/out", writable=True)` for a report written outside
    the workspace; its target may not be, hold or lie in /workspace, /home/sandbox, /dev
    or /proc); `programs`, programs shown read-only besides the one of argv (a path, or
    a name looked up on the environment's PATH, such as `node`)."""

    timeout: float
    env: Mapping[str, str]
    memory_mb: int = 1024
    cap: int = 1024 * 1024
    network: bool = False
    processes: int = PROCESSES
    file_mb: int = FILE_CAP // MIB
    backend: str = "auto"
    require: bool = False
    image: str = DEFAULT_IMAGE
    read_only: bool = False
    idle: float | None = None           # stopped after this many seconds without activity
    watch: Callable[[bytes], bool] | None = field(default=None, compare=False, repr=False)
    view: str = "private"
    expose: tuple[str, ...] = ()
    binds: tuple[Bind, ...] = ()
    programs: tuple[str, ...] = ()
