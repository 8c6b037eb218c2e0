"""Containment for code nobody reviewed: the command prefix that hides the network and
every other process from it, as far as this machine allows.

`containment()` tries, once per process, each way below and keeps the first that starts
`true`:

- `bwrap` (bubblewrap): new network and PID namespaces, a private `/proc`, every
  capability dropped, the program dies with bubblewrap;
- `unshare --net --pid --fork --mount-proc` (util-linux; smevals is root or holds
  CAP_SYS_ADMIN), or the same with `--map-root-user` (unprivileged user namespaces), the
  program started through `setpriv` with an empty capability bounding set and
  `no_new_privs`: without capabilities it cannot unmount the private `/proc` to uncover
  the machine's one, even when smevals runs as root; `--kill-child` keeps the
  parent-death signal;
- the same three with the network namespace only (where a private `/proc` cannot be
  mounted, in some containers);
- nothing: the program sees the network and every process of the user.

In a PID namespace the program is process 1 and `/proc` lists only its own processes, so
no `/proc/PID/environ` or `/proc/PID/cmdline` of smevals (or of any other process) can be
read; when it ends, the kernel kills every process left in the namespace. The same
function serves every kind of child that runs such code.
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

__all__ = ["Containment", "containment", "secret_names"]

_SETPRIV = ("setpriv", "--bounding-set=-all", "--inh-caps=-all", "--no-new-privs", "--")
_PIDS = ("--pid", "--fork", "--kill-child", "--mount-proc")
_BWRAP = ("bwrap", "--unshare-net", "--die-with-parent", "--cap-drop", "ALL", "--dev-bind",
          "/", "/")

# (name, prefix, hides the processes): the first that starts `true` is used
_WAYS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("bwrap", (*_BWRAP, "--unshare-pid", "--proc", "/proc", "--"), True),
    ("unshare", ("unshare", "--net", *_PIDS, "--", *_SETPRIV), True),
    ("unshare --map-root-user",
     ("unshare", "--net", *_PIDS, "--map-root-user", "--", *_SETPRIV), True),
    ("bwrap, network only", (*_BWRAP, "--"), False),
    ("unshare, network only", ("unshare", "--net", "--"), False),
    ("unshare --map-root-user, network only", ("unshare", "--net", "--map-root-user", "--"),
     False),
)

_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|PRIVATE", re.IGNORECASE)


@dataclass(frozen=True)
class Containment:
    """How a program is contained here: `name` for the record, `prefix` to put before its
    argv, and what it hides (`network`; `processes`: every process outside its own, and
    with them their environments and command lines)."""

    name: str
    prefix: tuple[str, ...] = ()
    network: bool = False
    processes: bool = False

    def wrap(self, argv: list[str]) -> list[str]:
        return [*self.prefix, *argv]

    @property
    def tools(self) -> list[str]:
        """The programs of the prefix, whose own errors start with their name."""
        return _tools(self.prefix)


NONE = Containment("none")


@functools.cache
def containment() -> Containment:
    """The strongest containment this machine gives (probed once per process)."""
    env = {"PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")}
    for name, prefix, processes in _WAYS:
        if any(shutil.which(tool) is None for tool in _tools(prefix)):
            continue
        probe = run_child(Spec([*prefix, "true"], Path("/"), env, timeout=10))
        if probe.exit_code == 0:
            return Containment(name, prefix, network=True, processes=processes)
    return NONE


def _tools(prefix: tuple[str, ...]) -> list[str]:
    return [p for p in prefix if p in ("bwrap", "unshare", "setpriv")]


def secret_names(environ: Mapping[str, str], kept: Mapping[str, str]) -> list[str]:
    """Names in `environ` that look like they hold a secret (API keys, tokens, passwords)
    and that the program's own environment `kept` leaves out."""
    return sorted(k for k in environ if k not in kept and _SECRET.search(k))
