"""Containment for code nobody reviewed: the command prefix that hides the network and
every other process from it, as far as this machine allows.

`containment(backend, network)` tries, once per process, each way of the backend below
and keeps the first that starts `true` (`network=True` keeps the network reachable and
leaves out the network namespace; everything else stays):

- `bwrap` (bubblewrap): new network and PID namespaces, a private `/proc`, every
  capability dropped, the program dies with bubblewrap;
- `unshare --net --pid --fork --mount-proc` (util-linux; smevals is root or holds
  CAP_SYS_ADMIN), or the same with `--map-root-user` (unprivileged user namespaces), the
  program started through `setpriv` with an empty capability bounding set and
  `no_new_privs`: without capabilities it cannot unmount the private `/proc` to uncover
  the machine's one, even when smevals runs as root; `--kill-child` keeps the
  parent-death signal;
- the same three with the network namespace only (where a private `/proc` cannot be
  mounted, in some containers); never with `network=True`, where they would hide nothing;
- `docker` or `podman`: a container (smevals.proc.container builds its command line);
  never chosen by `auto`, only when named;
- nothing (`none`): the program sees the network and every process of the user.

`auto` is the strongest local one (bwrap, then unshare, then none). In a PID namespace
the program is process 1 and `/proc` lists only its own processes, so no
`/proc/PID/environ` or `/proc/PID/cmdline` of smevals (or of any other process) can be
read; when it ends, the kernel kills every process left in the namespace.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from smevals.proc.child import Spec, run_child

__all__ = ["BACKENDS", "CONTAINERS", "Containment", "available", "containment", "find",
           "secret_names"]

BACKENDS = ("auto", "bwrap", "unshare", "docker", "podman", "none")
CONTAINERS = ("docker", "podman")

_SETPRIV = ("setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--")
_PIDS = ("--pid", "--fork", "--kill-child", "--mount-proc")
_BWRAP_BASE = ("bwrap", "--die-with-parent", "--cap-drop", "ALL", "--dev-bind", "/", "/")

_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|PRIVATE", re.IGNORECASE)


@dataclass(frozen=True)
class Way:
    """One way to contain a program: `name` for the record, its `backend`, whether it
    maps the user to root in a user namespace, and whether it hides the processes."""

    name: str
    backend: str
    map_root: bool = False
    processes: bool = True

    def prefix(self, network: bool) -> tuple[str, ...]:
        """The command prefix; `network` True keeps the network reachable."""
        net: tuple[str, ...]
        pid: tuple[str, ...]
        if self.backend == "bwrap":
            net = () if network else ("--unshare-net",)
            pid = ("--unshare-pid", "--proc", "/proc") if self.processes else ()
            return (*_BWRAP_BASE[:1], *net, *_BWRAP_BASE[1:], *pid, "--")
        net = () if network else ("--net",)
        pid = _PIDS if self.processes else ()
        root = ("--map-root-user",) if self.map_root else ()
        return ("unshare", *net, *pid, *root, "--", *(_SETPRIV if self.processes else ()))


_WAYS: tuple[Way, ...] = (
    Way("bwrap", "bwrap"),
    Way("unshare", "unshare"),
    Way("unshare --map-root-user", "unshare", map_root=True),
    Way("bwrap, network only", "bwrap", processes=False),
    Way("unshare, network only", "unshare", processes=False),
    Way("unshare --map-root-user, network only", "unshare", map_root=True, processes=False),
)


@dataclass(frozen=True)
class Containment:
    """How a program is contained here: `name` for the record, `prefix` to put before its
    argv, and what it hides (`network`; `processes`: every process outside its own, and
    with them their environments and command lines). `backend` is the kind (bwrap,
    unshare, docker, podman, none); a container's `prefix` is its runtime's path."""

    name: str
    prefix: tuple[str, ...] = ()
    network: bool = False
    processes: bool = False
    backend: str = "none"

    def wrap(self, argv: list[str]) -> list[str]:
        return [*self.prefix, *argv]

    @property
    def container(self) -> bool:
        return self.backend in CONTAINERS

    @property
    def tools(self) -> list[str]:
        """The programs of the prefix, whose own errors start with their name."""
        return _tools(self.prefix)


NONE = Containment("none")


def containment(network: bool = False) -> Containment:
    """The strongest local containment this machine gives (`auto`), probed once per
    process, with the network reachable when `network`."""
    return find("auto", network) or NONE


def find(backend: str, network: bool = False) -> Containment | None:
    """The strongest containment of `backend` this machine gives (probed once per
    process), with the network reachable when `network`; None when `backend` (named, not
    `auto`) cannot be used here."""
    if backend == "none":
        return NONE
    path = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    if backend in CONTAINERS:
        return _container(backend, network, path)
    return _local(backend, network, path)


@functools.cache
def _local(backend: str, network: bool, path: str) -> Containment | None:
    for way in _WAYS:
        if backend not in ("auto", way.backend) or (network and not way.processes):
            continue
        prefix = way.prefix(network)
        if _starts(prefix, path):
            name = f"{way.name}, network allowed" if network else way.name
            return Containment(name, prefix, network=not network, processes=way.processes,
                               backend=way.backend)
    return NONE if backend == "auto" else None


@functools.cache
def _starts(prefix: tuple[str, ...], path: str) -> bool:
    """Whether `prefix true` runs here (every tool on `path`, exit 0)."""
    if any(shutil.which(tool, path=path) is None for tool in _tools(prefix)):
        return False
    env = {"PATH": path}
    return run_child(Spec([*prefix, "true"], Path("/"), env, timeout=10)).exit_code == 0


def _container(runtime: str, network: bool, path: str) -> Containment | None:
    found = shutil.which(runtime, path=path)
    if found is None or not _daemon(found):
        return None
    name = f"{runtime}, network allowed" if network else runtime
    return Containment(name, (found,), network=not network, processes=True, backend=runtime)


@functools.cache
def _daemon(path: str) -> bool:
    """Whether the container runtime at `path` answers (`info`: its daemon is reachable)."""
    env = {k: v for k, v in os.environ.items()
           if k in ("PATH", "HOME", "XDG_RUNTIME_DIR", "CONTAINER_HOST")
           or k.startswith("DOCKER_")}
    res = run_child(Spec([path, "info", "--format", "{{json .}}"], Path("/"), env, timeout=15,
                         cap=1 << 16))
    return res.exit_code == 0


def available() -> list[str]:
    """What each local backend gives here, strongest first: `bwrap`, `unshare`, ...,
    `none` (containers are probed only when named: see `containment`)."""
    found = [box.name for backend in ("bwrap", "unshare")
             if (box := find(backend)) is not None]
    return [*found, "none"]


def _tools(prefix: tuple[str, ...]) -> list[str]:
    return [p for p in prefix if p in ("bwrap", "unshare", "setpriv")]


def secret_names(environ: Mapping[str, str], kept: Mapping[str, str]) -> list[str]:
    """Names in `environ` that look like they hold a secret (API keys, tokens, passwords)
    and that the program's own environment `kept` leaves out."""
    return sorted(k for k in environ if k not in kept and _SECRET.search(k))
