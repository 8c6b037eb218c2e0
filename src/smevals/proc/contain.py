"""Containment for code nobody reviewed: how it is started so that the network, every
other process and (with the private view) every file but its own are hidden from it, as
far as this machine allows.

`find(backend, network, read_only, view)` tries, once per process, each way of the
backend below and keeps the first that works here (`network=True` keeps the network
reachable and leaves out the network namespace; everything else stays):

- `bwrap` (bubblewrap): new network and PID namespaces, a private `/proc`, every
  capability dropped, the program dies with bubblewrap and is process 1 of its namespace
  (`--as-pid-1`: bubblewrap's own process 1 would tell bubblewrap the program's status
  before it has itself ended, so that it could outlive bubblewrap, found as a leftover);
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

With `view=True` (the default of every Policy: smevals.proc.view) the ways also build the
program's own filesystem: bubblewrap from its arguments (`mountns.bwrap_args`), unshare by a
function the child runs before exec (`mountns.preparer`: the namespaces, the mounts, the
move onto `/`), after which `unshare --fork --kill-child --mount-proc` only makes the
program process 1 with a `/proc` of its own. `none` gives no view. `view=False` is the
host's filesystem (`view: host`), made read-only but for the program's folder and its
home when `read_only` (a shell script remounts every mount).

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
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from smevals.proc.child import Spec, run_child

__all__ = ["BACKENDS", "CONTAINERS", "Containment", "available", "containment", "find",
           "probe_failure", "secret_names"]

BACKENDS = ("auto", "bwrap", "unshare", "docker", "podman", "none")
CONTAINERS = ("docker", "podman")

_SETPRIV = ("setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--")
_PIDS = ("--pid", "--fork", "--kill-child", "--mount-proc")
_BWRAP = ("--die-with-parent", "--cap-drop", "ALL")

_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|PRIVATE", re.IGNORECASE)

FOLDER = "\0folder"      # in a read-only prefix: the program's folder, filled in by `wrap`
HOME = "\0home"          # and its home (HOME, TMPDIR), also kept writable
VIEW = "\0view"          # in bubblewrap's view prefix: its arguments for the view
RO_TOOL = "smevals-ro"
# In the new mount namespace (made with the private /proc): keep the folder writable (a
# bind mount of its own), make every other mount read-only, then exec the rest.
_READ_ONLY = r"""d=$1 h=$2; shift 2
fail() { echo "smevals-ro: $1" >&2; exit 125; }
mount --bind "$h" "$h" 2>/dev/null || fail "cannot keep $h writable"
mount --bind "$d" "$d" 2>/dev/null && cd "$d" || fail "cannot keep $d writable"
while read -r _ _ _ _ m o _; do
  case $o in ro|ro,*) continue;; esac
  case $m in *\\*) m=$(printf '%b' "$m");; esac
  case $m in /proc|/proc/*|"$d"|"$h") continue;; esac
  mount -o remount,bind,ro "$m" 2>/dev/null || fail "cannot make $m read-only"
done < /proc/self/mountinfo
exec "$@"
"""


@dataclass(frozen=True)
class Way:
    """One way to contain a program: `name` for the record, its `backend`, whether it
    maps the user to root in a user namespace, and whether it hides the processes."""

    name: str
    backend: str
    map_root: bool = False
    processes: bool = True

    def prefix(self, network: bool, read_only: bool = False) -> tuple[str, ...]:
        """The command prefix on the host's filesystem; `network` True keeps the network
        reachable; `read_only` makes everything but the program's folder (FOLDER)
        read-only."""
        net: tuple[str, ...]
        pid: tuple[str, ...]
        if self.backend == "bwrap":
            net = () if network else ("--unshare-net",)
            pid = ("--unshare-pid", "--as-pid-1", "--proc", "/proc") if self.processes else ()
            root: tuple[str, ...] = ("--ro-bind", "/", "/", "--dev", "/dev") if read_only \
                else ("--dev-bind", "/", "/")
            folder: tuple[str, ...] = ("--bind", HOME, HOME, "--bind", FOLDER, FOLDER) \
                if read_only else ()
            return ("bwrap", *net, *_BWRAP, *root, *pid, *folder, "--")
        net = () if network else ("--net",)
        pid = _PIDS if self.processes else ()
        root = ("--map-root-user",) if self.map_root else ()
        ro = ("sh", "-c", _READ_ONLY, RO_TOOL, FOLDER, HOME) if read_only else ()
        return ("unshare", *net, *pid, *root, "--", *ro, *(_SETPRIV if self.processes else ()))

    def view_prefix(self, path: str) -> tuple[str, ...] | None:
        """The command prefix with the program's own view (its namespaces made by the
        child itself for unshare: `mountns`); None when a tool is not on `path`."""
        if self.backend == "bwrap":
            tool = shutil.which("bwrap", path=path)
            return None if tool is None else (tool, VIEW, "--")
        tools = [shutil.which(name, path=path) for name in ("unshare", "setpriv")]
        if None in tools:
            return None
        unshare, setpriv = (os.path.realpath(str(t)) for t in tools)
        pid = (unshare, "--fork", "--kill-child", "--mount-proc", "--") if self.processes \
            else ()
        return (*pid, setpriv, *_SETPRIV[1:])


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
    unshare, docker, podman, none); a container's `prefix` is its runtime's path. `view`:
    it runs in its own view of the filesystem (smevals.proc.view), made by bubblewrap's
    arguments or, for unshare, by `prepare` in the child (as root in a user namespace
    when `map_root`)."""

    name: str
    prefix: tuple[str, ...] = ()
    network: bool = False
    processes: bool = False
    backend: str = "none"
    read_only: bool = False             # everything but the program's folder is read-only
    view: bool = False
    map_root: bool = False

    def wrap(self, argv: list[str], folder: Path | None = None,
             home: Path | None = None, layout: object = None) -> list[str]:
        """`argv` behind the prefix; `folder` (the program's, kept writable) fills FOLDER,
        `home` (also kept writable; by default `folder`) fills HOME; `layout` (a View)
        fills bubblewrap's VIEW."""
        where = os.path.realpath(folder) if folder is not None else "/"
        fills = {FOLDER: where, HOME: os.path.realpath(home) if home is not None else where}
        out: list[str] = []
        for part in self.prefix:
            if part == VIEW:
                from smevals.proc.mountns import bwrap_args
                from smevals.proc.view import View

                assert isinstance(layout, View)
                out += bwrap_args(layout, not self.network, self.processes)
            else:
                out.append(fills.get(part, part))
        return out + argv

    def prepare(self, layout: object) -> Callable[[], None] | None:
        """What the child runs before exec to make the view (unshare only), or None."""
        if not (self.view and self.backend == "unshare"):
            return None
        from smevals.proc.mountns import preparer
        from smevals.proc.view import View

        assert isinstance(layout, View)
        return preparer(layout, map_root=self.map_root, network=not self.network,
                        pid=self.processes)

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
    process, with the network reachable when `network`, on the host's filesystem."""
    return find("auto", network) or NONE


def find(backend: str, network: bool = False, read_only: bool = False,
         view: bool = False) -> Containment | None:
    """The strongest containment of `backend` this machine gives (probed once per
    process), with the network reachable when `network`; in its own view of the
    filesystem when `view`, else on the host's with everything but the program's folder
    read-only when `read_only`. None when it cannot be had here (`auto` falls back to
    `none`, except for `read_only` and `view`, which `none` cannot give)."""
    if backend == "none":
        return None if read_only or view else NONE
    path = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    if backend in CONTAINERS:
        return _container(backend, network, path)
    if view:
        return _viewed(backend, network, path)
    return _local(backend, network, read_only, path)


@functools.cache
def _local(backend: str, network: bool, read_only: bool, path: str) -> Containment | None:
    for way in _WAYS:
        if backend not in ("auto", way.backend) or (
                (network or read_only) and not way.processes):
            continue
        prefix = _located(way.prefix(network, read_only), path)
        if _starts(prefix, path):
            name = way.name + (", network allowed" if network else "") + (
                ", read-only" if read_only else "")
            return Containment(name, prefix, network=not network, processes=way.processes,
                               backend=way.backend, read_only=read_only)
    return NONE if backend == "auto" and not read_only else None


def _located(prefix: tuple[str, ...], path: str) -> tuple[str, ...]:
    """`prefix` with its tools by their paths on `path` (the program's own PATH, which
    starts them, may not have them)."""
    return tuple((shutil.which(part, path=path) or part)
                 if part in ("bwrap", "unshare", "setpriv", "sh") else part for part in prefix)


_FAILED: dict[tuple[str, bool, str], list[str]] = {}


@functools.cache
def _viewed(backend: str, network: bool, path: str) -> Containment | None:
    failed = _FAILED.setdefault((backend, network, path), [])
    for way in _WAYS:
        if backend not in ("auto", way.backend) or (network and not way.processes):
            continue
        prefix = way.view_prefix(path)
        if prefix is None:
            missing = f"{way.backend}: not installed"
            failed += [] if missing in failed else [missing]
            continue
        name = way.name + (", network allowed" if network else "")
        box = Containment(name, prefix, network=not network, processes=way.processes,
                          backend=way.backend, view=True, map_root=way.map_root)
        why = _view_starts(box, path)
        if why is None:
            return box
        failed.append(f"{way.name}: {why}")
    return None


def probe_failure(backend: str, network: bool) -> str | None:
    """Why no way of `backend` could build a view here, each way's reason (`bwrap: not
    installed; unshare: ...`), once `find` has tried them."""
    path = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    return "; ".join(_FAILED.get((backend, network, path), [])) or None


def _view_starts(box: Containment, path: str) -> str | None:
    """Why `box` cannot run a program in a view here (it writes a file into its
    workspace), or None when it can."""
    from smevals.proc.view import ViewError, build

    with tempfile.TemporaryDirectory(prefix="smevals-probe-") as tmp:
        folder, home = Path(tmp, "ws"), Path(tmp, "home")
        folder.mkdir()
        home.mkdir()
        try:
            layout = build(folder, home, proc=box.processes, network=not box.network,
                           programs=[p for p in box.prefix if p.startswith("/")])
        except ViewError as error:
            return str(error)
        argv = box.wrap(["/bin/sh", "-c", "echo > probe"], folder, home, layout)
        res = run_child(Spec(argv, folder, {"PATH": path}, timeout=10,
                             prepare=box.prepare(layout)))
        if res.exit_code == 0 and (folder / "probe").is_file():
            return None
        line = res.stderr.data.decode("utf-8", "replace").strip().partition("\n")[0]
        return res.error or line or f"exit code {res.exit_code}"


@functools.cache
def _starts(prefix: tuple[str, ...], path: str) -> bool:
    """Whether `prefix true` runs here (every tool on `path`, exit 0); a read-only prefix
    is tried on a folder of its own, which it must be able to write."""
    tools = _tools(prefix) + (["mount"] if FOLDER in prefix else [])
    if any(shutil.which(tool, path=path) is None for tool in tools):
        return False
    env = {"PATH": path}
    with tempfile.TemporaryDirectory(prefix="smevals-probe-") as tmp:
        folder = Path(tmp)
        argv = Containment("probe", prefix).wrap(["sh", "-c", "echo > probe"], folder) \
            if FOLDER in prefix else [*prefix, "true"]
        res = run_child(Spec(argv, folder, env, timeout=10))
        return res.exit_code == 0 and (FOLDER not in prefix or (folder / "probe").is_file())


def _container(runtime: str, network: bool, path: str) -> Containment | None:
    found = shutil.which(runtime, path=path)
    if found is None or not _daemon(found):
        return None
    name = f"{runtime}, network allowed" if network else runtime
    return Containment(name, (found,), network=not network, processes=True, backend=runtime,
                       read_only=True, view=True)


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
    return [p for p in prefix if os.path.basename(p) in ("bwrap", "unshare", "setpriv")]


def secret_names(environ: Mapping[str, str], kept: Mapping[str, str]) -> list[str]:
    """Names in `environ` that look like they hold a secret (API keys, tokens, passwords)
    and that the program's own environment `kept` leaves out."""
    return sorted(k for k in environ if k not in kept and _SECRET.search(k))
