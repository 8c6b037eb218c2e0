"""The filesystem a sandboxed program sees, built deny-by-default (issue 34).

A `View` lists everything that exists for the program; nothing else does:

- read-only, each at its own path: the system's runtime folders (`/usr`, `/bin`, `/sbin`,
  `/lib*`, kept as links where the host has links), `/etc` less every entry its owner keeps
  from other users (no "others may read" bit: `shadow`, `gshadow`, `sudoers`, ssh host
  keys, `ssl/private`, ...; a file reads as empty, a folder as empty), the Python smevals
  runs (`sys.prefix` and `sys.base_prefix`, real paths; its user's site-packages where
  Python reads one), the programs a caller runs
  (`programs`, and the program of argv: its real path, or its npm dependency tree (the
  outermost `node_modules` folder) when it lies in one; a bare name such as `node` is
  looked up on the program's PATH),
  and the paths a setting exposes (`expose`);
- writable: the workspace at WORKSPACE (`/workspace`, the program's working folder) and
  the private home at HOME (`/home/sandbox`), unless the home lies in the workspace;
- a private `/tmp` (a tmpfs of TMP_MB MiB), a minimal `/dev` (null, zero, full, random,
  urandom, tty, a `/dev/shm` tmpfs of SHM_MB MiB, the fd links) and, where a PID
  namespace is made, a private `/proc`;
- the `extra` binds a caller adds (`Bind(source, target, writable)`: a private folder
  for a report outside the workspace, say).

Not the Eval folder, the store, the host's `/tmp`, `/home`, `/root`, `/run` or `/var`, so
no Unix socket of the host either (a read-only mount would not stop `connect()`). With the
network allowed, the real file behind `/etc/resolv.conf` is added when it lies elsewhere.

Callers pass host paths: `View.inside(path)` is a host path's path in the view, and
`View.env` / `View.argv` translate an environment and an argv (values that are host
paths in the workspace, the home or an extra bind; a colon-separated list part by part).
`build` raises ViewError where no such view can be made (an exposed path that does not
exist or holds the workspace, smevals' own Python where the workspace goes).
`smevals.proc.mountns` makes a View: bubblewrap's arguments (`bwrap_args`), or the steps
the unshare backend's child takes.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["HOME", "SHM_MB", "TMP_MB", "WORKSPACE", "Bind", "Mount", "View", "ViewError",
           "build", "check_expose", "expose_problem", "package_of"]

WORKSPACE = "/workspace"
HOME = "/home/sandbox"
TMP_MB = 256
SHM_MB = 64
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
SECRETS = ("/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
           "/etc/sudoers.d", "/etc/ssl/private", "/etc/security/opasswd")
_FIXED = (WORKSPACE, HOME, "/dev", "/proc")     # what only the view itself puts there
_ETC_LIMIT = 50_000                              # entries of /etc looked at, at most


class ViewError(Exception):
    """No view can be made for this program here (why, in words for a record)."""


@dataclass(frozen=True)
class Bind:
    """A host path (`source`) shown at `target` in the view, writable or not."""

    source: str
    target: str
    writable: bool = False


@dataclass(frozen=True)
class Mount:
    """One step of a view: a `bind` of `source` (a folder or a file, recursive for the
    read-only folders of the system), a `tmpfs` of `size_mb`, a `hide` (a secret made
    empty), or the `dev` and `proc` the backend makes its own way."""

    kind: str
    target: str
    source: str = ""
    writable: bool = False
    is_dir: bool = True
    size_mb: int = 0
    recursive: bool = False


@dataclass(frozen=True)
class View:
    mounts: tuple[Mount, ...]                    # parents before what they hold
    links: tuple[tuple[str, str], ...] = ()      # (path in the view, link text)
    proc: bool = True
    exposed: tuple[str, ...] = ()                # what a setting exposed, for the record
    moved: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # host -> view

    def inside(self, path: str | os.PathLike[str]) -> str | None:
        """`path` (a host path) as the program sees it; None when it is not in the view."""
        text = os.path.abspath(os.fspath(path))
        for source, target in self.moved:
            if text == source or text.startswith(source.rstrip("/") + "/"):
                return target + text[len(source):]
        return text if self.sees(text) else None

    def sees(self, path: str) -> bool:
        """Whether the host path `path` is visible at its own path in the view."""
        text = _through(os.path.abspath(path), self.links)
        return any(_under(text, m.target) for m in self.mounts
                   if m.kind == "bind" and m.source == m.target)

    def translate(self, value: str) -> str:
        """`value` with each host path of the workspace, the home or an extra bind (the
        whole value, or each part of a colon-separated list) put as the program sees it."""
        if "/" not in value:
            return value
        return ":".join(self._moved(part) for part in value.split(":"))

    def _moved(self, part: str) -> str:
        for source, target in self.moved:
            if part == source or part.startswith(source.rstrip("/") + "/"):
                return target + part[len(source):]
        return part

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        return {key: self.translate(value) for key, value in env.items()}

    def argv(self, argv: list[str]) -> list[str]:
        """`argv` translated; a program given by a path the view does not have at that
        path (a link to it, say) is run by its real path, which the view has."""
        out = [self.translate(arg) for arg in argv]
        if out and out[0] == argv[0] and os.path.isabs(argv[0]):
            given = os.path.abspath(argv[0])        # no `..` through folders it lacks
            real = os.path.realpath(given)
            out[0] = given if self.sees(given) or not self.sees(real) else real
        return out


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _through(path: str, links: Iterable[tuple[str, str]]) -> str:
    """`path` read through the view's own top-level links (`/bin/sh` -> `/usr/bin/sh`)."""
    for link, text in links:
        if _under(path, link):
            target = text if text.startswith("/") else os.path.join(os.path.dirname(link), text)
            return os.path.normpath(target) + path[len(link):]
    return path


def build(workspace: str | os.PathLike[str], home: str | os.PathLike[str] | None = None, *,
          expose: Iterable[str] = (), extra: Iterable[Bind] = (),
          programs: Iterable[str] = (), network: bool = False, proc: bool = True,
          search: str = "") -> View:
    """The view of a program working in `workspace` with `home` (None or inside the
    workspace: no home of its own); `search` is its PATH, where bare program names are
    looked up. ViewError where it cannot be made."""
    folder = os.path.realpath(workspace)
    base = _Builder()
    base.system()
    base.python()
    for name in programs:
        base.program(name, search)
    exposed = tuple(os.path.abspath(path) for path in expose)
    for path in exposed:
        base.expose(path, folder)
    if network:
        base.resolver()
    base.writable(folder, WORKSPACE, os.fspath(workspace))
    own = None if home is None else os.path.realpath(home)
    if own is not None and not _under(own, folder):
        if _under(folder, own):
            raise ViewError(f"the workspace {folder} lies in the private home {own}")
        base.writable(own, HOME, os.fspath(home or own))
    for bind in extra:
        base.extra(bind)
    base.special(proc)
    return base.view(proc, exposed)


def check_expose(paths: Iterable[str]) -> str | None:
    """Why an `expose:` list cannot be given here (a path that is not absolute, does not
    exist, is `/` or lies where the view puts its own: `/dev`, `/proc`), or None."""
    for path in paths:
        why = expose_problem(path)
        if why is not None:
            return f"expose: {why}"
    return None


def expose_problem(path: str, holds: str | None = None) -> str | None:
    """Why `path` cannot be exposed here, or None; `holds`: a folder it may not hold
    (the Eval's: its hidden files and its store)."""
    if not os.path.isabs(path):
        return f"{path!r} is not an absolute path"
    if not os.path.exists(path):
        return f"{path!r} does not exist here"
    real = os.path.realpath(path)
    if real == "/":
        return f"{path!r} is the whole machine"
    fixed = _fixed(os.path.abspath(path)) or _fixed(real)
    if fixed is not None:           # /dev/shm/...: the view's private /dev would cover it
        return f"{path!r} lies in {fixed}, where the sandbox puts its own; expose a path elsewhere"
    if holds is not None and _under(os.path.realpath(holds), real):
        return (f"{path!r} holds the Eval's folder (its hidden files and its results); "
                f"expose only what the Task needs")
    return None


class _Builder:
    def __init__(self) -> None:
        self.mounts: dict[str, Mount] = {}
        self.links: list[tuple[str, str]] = []
        self.moved: list[tuple[str, str]] = []

    def system(self) -> None:
        links, folders, hidden = _system()
        self.links += links
        for path in folders:
            self.same(path, recursive=True)
        for path, is_dir in hidden:
            self.mounts[path] = Mount("hide", path, is_dir=is_dir)

    def python(self) -> None:
        for given, real in _python():
            if _fixed(real):
                raise ViewError(f"the Python smevals runs ({real}) lies at {_fixed(real)}, "
                                f"where the view puts its own; run smevals from elsewhere")
            self.same(real, recursive=True)
            if given != real and not _fixed(given):
                self.put(Bind(real, given), recursive=True)

    def program(self, name: str, search: str) -> None:
        found = name if os.path.isabs(name) else shutil.which(name, path=search or None)
        if found is None or not os.path.exists(found):
            return
        real = os.path.realpath(found)
        package = package_of(real)
        self.same(package or real, recursive=bool(package), quiet=True)
        located = os.path.abspath(found)
        if "/" not in name and located != real and not self.covered(located):
            self.put(Bind(real, located), quiet=True)      # a bare name, found on PATH

    def expose(self, path: str, workspace: str) -> None:
        why = check_expose([path])
        if why is not None:
            raise ViewError(why)
        real = os.path.realpath(path)
        if _under(workspace, real):
            raise ViewError(f"expose: {path!r} holds the workspace's own folder (and so "
                            f"the store and the Eval); expose only what the Task needs")
        self.same(real, recursive=True)
        if path != real and not self.covered(path):
            self.put(Bind(real, path), recursive=True)

    def resolver(self) -> None:
        real = os.path.realpath("/etc/resolv.conf")
        if os.path.isfile(real) and not self.covered(real):
            self.same(real, quiet=True)

    def writable(self, source: str, target: str, given: str) -> None:
        self.mounts[target] = Mount("bind", target, source, writable=True)
        self.moved += [(source, target)] + ([(os.path.abspath(given), target)]
                                            if os.path.abspath(given) != source else [])

    def extra(self, bind: Bind) -> None:
        target = os.path.normpath(bind.target)
        if not os.path.isabs(target) or target == "/" or any(
                _under(target, f) or _under(f, target) for f in _FIXED):
            raise ViewError(f"cannot put {bind.source} at {bind.target} in the view")
        source = os.path.realpath(bind.source)
        self.mounts[target] = Mount("bind", target, source, writable=bind.writable,
                                    is_dir=os.path.isdir(source))
        if source != target:
            self.moved.append((source, target))

    def special(self, proc: bool) -> None:
        self.mounts["/tmp"] = Mount("tmpfs", "/tmp", size_mb=TMP_MB)
        self.mounts["/dev"] = Mount("dev", "/dev")
        if proc:
            self.mounts["/proc"] = Mount("proc", "/proc")

    def covered(self, path: str) -> bool:
        text = _through(path, self.links)
        return any(_under(text, m.target) for m in self.mounts.values()
                   if m.kind == "bind" and not m.writable)

    def same(self, path: str, recursive: bool = False, quiet: bool = False) -> None:
        """`path` read-only at its own path (nothing when the view has it already)."""
        if not self.covered(path):
            self.put(Bind(path, path), recursive=recursive, quiet=quiet)

    def put(self, bind: Bind, recursive: bool = False, quiet: bool = False) -> None:
        target = _through(bind.target, self.links)
        place = _fixed(target) or ("/tmp" if target == "/tmp" else None)
        if place:
            if quiet:
                return
            raise ViewError(f"{bind.source} cannot be shown at {target}: the view puts "
                            f"its own {place} there")
        for inner in [t for t in self.mounts if _under(t, target) and t != target]:
            if self.mounts[inner].kind == "bind" and not self.mounts[inner].writable:
                del self.mounts[inner]                  # the new one holds it
        self.mounts[target] = Mount("bind", target, bind.source,
                                    is_dir=os.path.isdir(bind.source), recursive=recursive)

    def view(self, proc: bool, exposed: tuple[str, ...]) -> View:
        order = sorted(self.mounts.values(), key=lambda m: m.target.split("/"))
        moved = sorted(set(self.moved), key=lambda pair: -len(pair[0]))
        return View(tuple(order), tuple(self.links), proc, exposed, tuple(moved))


def _fixed(path: str) -> str | None:
    return next((place for place in _FIXED if _under(path, place)), None)


@functools.cache
def _system() -> tuple[list[tuple[str, str]], list[str], list[tuple[str, bool]]]:
    """The system's runtime folders: (links to recreate, folders to bind, secrets of /etc
    to hide); looked at once per process."""
    links, folders = [], []
    for path in SYSTEM:
        if os.path.islink(path):
            links.append((path, os.readlink(path)))
        elif os.path.isdir(path):
            folders.append(path)
    hidden = _secrets("/etc") if "/etc" in folders else []
    return links, folders, hidden


def _secrets(root: str) -> list[tuple[str, bool]]:
    """The entries of `root` other users may not read (and the known secret names), not
    looking inside a hidden folder; each with whether it is a folder."""
    found: dict[str, bool] = {}
    seen = 0
    for here, dirs, files in os.walk(root):
        for name in sorted(dirs) + sorted(files):
            seen += 1
            path = os.path.join(here, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if _private(mode) or path in SECRETS:
                found[path] = stat.S_ISDIR(mode)
        dirs[:] = [d for d in dirs if os.path.join(here, d) not in found]
        if seen > _ETC_LIMIT:
            break
    return sorted(found.items())


def _private(mode: int) -> bool:
    if stat.S_ISLNK(mode):
        return False
    if stat.S_ISDIR(mode):
        return not (mode & stat.S_IROTH and mode & stat.S_IXOTH)
    return not mode & stat.S_IROTH


@functools.cache
def _python() -> list[tuple[str, str]]:
    """(the path, its real path) of each prefix of the Python smevals runs, and of its
    user's site-packages where Python reads one (`pip install --user`)."""
    import site

    user = site.getusersitepackages() if site.ENABLE_USER_SITE else ""
    found: dict[str, str] = {}
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, user):
        if prefix and os.path.isdir(prefix):
            given = os.path.abspath(prefix)
            found.setdefault(given, os.path.realpath(given))
    return sorted(found.items())


def package_of(path: str) -> str | None:
    """The npm dependency tree `path` lies in: its outermost `node_modules` folder, or None.
    A package alone is not enough: Node resolves its dependencies up the tree, hoisted
    beside it (Pi's), and Codex starts its binary from a sibling package
    (`@openai/codex-linux-x64`)."""
    parts = path.split("/")
    if "node_modules" not in parts:
        return None
    return "/".join(parts[:parts.index("node_modules") + 1])
