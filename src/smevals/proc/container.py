"""The container backend of the sandbox: `docker run` or `podman run`, for users who have
a container runtime.

The command line (`command`) runs the program in a throw-away container (`--rm`, a
unique `--name`) of the configured image with no network (`--network none` unless the
policy allows it), every capability dropped, `no-new-privileges`, a read-only root with a
private `/tmp`, the host user's uid and gid, and the limits as flags (`--memory`,
`--pids-limit`, `--ulimit fsize/cpu/core`). The image is the program's whole filesystem
but for its folder, mounted at /workspace as its working directory, its private home at
/home/sandbox (when it has one of its own), what the Policy exposes (read-only, at its own
path) and its extra binds, as the local backends' view has them (`view`: the same
translation of argv and the environment). Only the names of the environment's variables
are on the command line (`-e NAME`): their values reach the container through the
runtime's own environment, never through an argv another process could read. An
interpreter given by an absolute path outside the folder (smevals' own Python) is looked
up on the image's PATH by its base name. The client runs as a child like any other; at a
deadline it is killed, and `remove` removes the container it left running in the daemon.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from smevals.proc.child import Spec, run_child
from smevals.proc.view import HOME, WORKSPACE, View, ViewError, check_expose

if TYPE_CHECKING:
    from smevals.proc.policy import Policy

__all__ = ["client_env", "command", "new_name", "remove", "view"]

EXIT_RUNTIME = 125          # `docker run` and `podman run`: the container could not start

_CLIENT_ENV = ("PATH", "HOME", "XDG_RUNTIME_DIR", "CONTAINER_HOST", "CONTAINERS_CONF")


def new_name() -> str:
    return f"smevals-{os.urandom(8).hex()}"


def view(cwd: Path, home: Path | None, policy: Policy) -> View:
    """Where the container has the host's paths (to translate argv and the environment);
    ViewError when an exposed path cannot be given."""
    why = check_expose(policy.expose)
    if why is not None:
        raise ViewError(why)
    moved = [(os.path.realpath(cwd), WORKSPACE), (os.path.abspath(cwd), WORKSPACE)]
    if home is not None and os.path.realpath(home) != os.path.realpath(cwd):
        moved += [(os.path.realpath(home), HOME), (os.path.abspath(home), HOME)]
    moved += [(os.path.realpath(b.source), b.target) for b in policy.binds]
    pairs = sorted(set(moved), key=lambda pair: -len(pair[0]))
    return View((), proc=True, exposed=policy.expose, moved=tuple(pairs))


def command(runtime: str, path: str, argv: list[str], cwd: Path, policy: Policy,
            name: str, home: Path | None = None) -> list[str]:
    """`runtime run ...` for `argv` in `cwd` under `policy` (its env already scrubbed and,
    like argv, translated by `view`); `home`, its private home, when not `cwd`."""
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
             "--volume", f"{cwd}:{WORKSPACE}", "--workdir", WORKSPACE]
    if home is not None and os.path.realpath(home) != os.path.realpath(cwd):
        flags += ["--volume", f"{home}:{HOME}"]
    for exposed in policy.expose:
        flags += ["--volume", f"{os.path.realpath(exposed)}:{os.path.abspath(exposed)}:ro"]
    for bind in policy.binds:
        flags += ["--volume", f"{bind.source}:{bind.target}{'' if bind.writable else ':ro'}"]
    if runtime == "podman" and os.getuid() != 0:
        flags.append("--userns=keep-id")
    for key in sorted(policy.env):
        flags += ["--env", key]
    return [path, *flags, policy.image, *_inside(argv)]


def _inside(argv: list[str]) -> list[str]:
    """`argv` (translated) with an absolute program outside the workspace replaced by its
    base name."""
    program = Path(argv[0])
    if program.is_absolute() and not program.is_relative_to(WORKSPACE):
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
