"""The container backend of the sandbox: `docker run` or `podman run`, for users who have
a container runtime.

The command line (`command`) runs the program in a throw-away container (`--rm`, a
unique `--name`) of the configured image with no network (`--network none` unless the
policy allows it), every capability dropped, `no-new-privileges`, a read-only root with a
private `/tmp`, the host user's uid and gid, and the limits as flags (`--memory`,
`--pids-limit`, `--ulimit fsize/cpu/core`). The private folder is bind-mounted at its own
path and is the working directory, so paths inside it mean the same in and out of the
container. Only the names of the environment's variables are on the command line (`-e
NAME`): their values reach the container through the runtime's own environment, never
through an argv another process could read. An interpreter given by an absolute path
outside the folder (smevals' own Python) is looked up on the image's PATH by its base
name. The client runs as a child like any other; at a deadline it is killed, and
`remove` removes the container it left running in the daemon.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from smevals.proc.child import Spec, run_child

if TYPE_CHECKING:
    from smevals.proc.sandbox import Policy

__all__ = ["DEFAULT_IMAGE", "client_env", "command", "new_name", "remove"]

DEFAULT_IMAGE = "python:3.11-slim"
EXIT_RUNTIME = 125          # `docker run` and `podman run`: the container could not start

_CLIENT_ENV = ("PATH", "HOME", "XDG_RUNTIME_DIR", "CONTAINER_HOST", "CONTAINERS_CONF")


def new_name() -> str:
    return f"smevals-{os.urandom(8).hex()}"


def command(runtime: str, path: str, argv: list[str], cwd: Path, policy: Policy,
            name: str) -> list[str]:
    """`runtime run ...` for `argv` in `cwd` under `policy` (its env already scrubbed)."""
    file_bytes = policy.file_mb * 1024 * 1024
    cpu = int(policy.timeout) + 1
    flags = ["run", "--rm", "--name", name,
             "--network", "bridge" if policy.network else "none",
             "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
             "--read-only", "--tmpfs", "/tmp",
             "--user", f"{os.getuid()}:{os.getgid()}",
             "--memory", f"{policy.memory_mb}m", "--memory-swap", f"{policy.memory_mb}m",
             "--pids-limit", str(policy.processes),
             "--ulimit", f"fsize={file_bytes}:{file_bytes}",
             "--ulimit", f"cpu={cpu}:{cpu + 1}", "--ulimit", "core=0:0",
             "--volume", f"{cwd}:{cwd}", "--workdir", str(cwd)]
    if runtime == "podman" and os.getuid() != 0:
        flags.append("--userns=keep-id")
    for key in sorted(policy.env):
        flags += ["--env", key]
    return [path, *flags, policy.image, *_inside(argv, cwd)]


def _inside(argv: list[str], cwd: Path) -> list[str]:
    """`argv` with an absolute program outside `cwd` replaced by its base name."""
    program = Path(argv[0])
    if program.is_absolute() and not program.is_relative_to(cwd):
        return [program.name, *argv[1:]]
    return argv


def client_env(env: Mapping[str, str], environ: Mapping[str, str]) -> dict[str, str]:
    """The runtime client's own environment: the program's (for `-e NAME`) plus what the
    client needs to reach its daemon from `environ` (DOCKER_*, CONTAINER_HOST...)."""
    extra = {k: v for k, v in environ.items()
             if k.startswith("DOCKER_") or k in _CLIENT_ENV[2:]}
    return {**extra, **env}


def remove(path: str, name: str, env: Mapping[str, str]) -> None:
    """Remove the container `name` if the daemon still runs it (after a deadline)."""
    run_child(Spec([path, "rm", "--force", name], Path("/"), dict(env), timeout=30,
                   cap=1 << 16))
