"""Make a View (smevals.proc.view): bubblewrap's arguments (`bwrap_args`), or, for the
unshare backend, the steps its child takes between fork and exec.

`preparer(view, ...)` returns the function the child runs after its limits are set and
before it execs `unshare --fork --kill-child --mount-proc -- setpriv ... PROGRAM` (or
`setpriv ... PROGRAM` without a PID namespace). In the child it:

1. makes its namespaces with unshare(2): a mount namespace, the network one (unless the
   network is allowed), the PID one its first child will be process 1 of, and a user
   namespace mapping the user to root where smevals is not root (`map_root`);
2. makes every mount private, so nothing propagates back to the host;
3. mounts a small tmpfs on ROOT (an empty folder of its own, made in the parent) and
   builds the view on it: each bind (read-only ones remounted read-only, with every mount
   below a recursive one, keeping the flags the kernel locks), the private `/tmp`, the
   secrets of `/etc` covered, a `/dev` of bound device nodes, the links;
4. remounts that tmpfs read-only, moves it onto `/` and enters it (chroot), then the
   workspace. Nothing of the host is reachable by a path from there; the program gets no
   capability (setpriv), so it can neither unmount nor escape.

That costs a few dozen system calls in the child, against one process per mount for a
shell script of `mount` commands. As smevals.proc.limits asks, everything is computed in
the parent: the child only calls functions bound beforehand with arguments built
beforehand. On a failure the child writes `smevals-view: cannot ...` on its stderr and
exits with 125 (sandbox.EXIT_WRAPPER), so the program never runs on a half-built view.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import os
import tempfile
from collections.abc import Callable
from typing import Any

from smevals.proc.view import SHM_MB, WORKSPACE, Mount, View

__all__ = ["TOOL", "Step", "bwrap_args", "preparer", "root_folder"]

TOOL = "smevals-view"
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND = 32, 1024, 2048, 4096
MS_MOVE, MS_REC, MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 8192, 16384, 1 << 18, 1 << 21, 1 << 24
_LOCKED = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": MS_NOATIME,
           "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME,
           "strictatime": MS_STRICTATIME}
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
DEV_LINKS = (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
             ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2"))

Step = tuple[Callable[..., Any], tuple[Any, ...], str]


@functools.cache
def _libc() -> tuple[Callable[..., int], Callable[..., int]]:
    lib = ctypes.CDLL(None, use_errno=True)
    mount, unshare = lib.mount, lib.unshare
    mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                      ctypes.c_char_p]
    unshare.argtypes = [ctypes.c_int]
    return mount, unshare


def _checked(fn: Callable[..., int]) -> Callable[..., None]:
    get_errno, error = ctypes.get_errno, OSError

    def call(*args: object) -> None:
        if fn(*args) != 0:
            number = get_errno()
            raise error(number, os.strerror(number))

    return call


def root_folder() -> str:
    """An empty folder of smevals' own to build views on (made once; made again if a
    cleaner removed it). Nothing else lies below it, so it hides no source of a bind."""
    folder = _ROOT.get("path")
    if folder is None or not os.path.isdir(folder):
        folder = tempfile.mkdtemp(prefix="smevals-view-")
        _ROOT["path"] = folder
        atexit.register(_remove, folder)
    return folder


def _remove(folder: str) -> None:
    with contextlib.suppress(OSError):
        os.rmdir(folder)


_ROOT: dict[str, str] = {}


def preparer(view: View, *, map_root: bool, network: bool, pid: bool,
             root: str | None = None) -> Callable[[], None]:
    """The child's function that makes `view` (see the module's docstring)."""
    steps = plan(view, root or root_folder(), map_root=map_root, network=network, pid=pid)
    write, exit_, fail = os.write, os._exit, _message

    def child() -> None:
        for fn, args, what in steps:
            try:
                fn(*args)
            except BaseException as exc:  # noqa: BLE001 - the child must never return here
                write(2, fail(what, exc))
                exit_(125)

    return child


def _message(what: str, exc: BaseException) -> bytes:
    reason = getattr(exc, "strerror", None) or str(exc)
    return f"{TOOL}: cannot {what}: {reason}\n".encode("utf-8", "replace")


def plan(view: View, root: str, *, map_root: bool, network: bool, pid: bool) -> list[Step]:
    """Every step of the child, in order, with its arguments."""
    mount, unshare = (_checked(fn) for fn in _libc())
    flags = CLONE_NEWNS | (0 if network else CLONE_NEWNET) | (CLONE_NEWPID if pid else 0) | (
        CLONE_NEWUSER if map_root else 0)
    steps: list[Step] = [(unshare, (flags,), "make the namespaces")]
    if map_root:
        steps += _map_root(os.getuid(), os.getgid())
    steps += [(mount, (None, b"/", None, MS_REC | MS_PRIVATE, None), "make the mounts private"),
              (mount, (b"tmpfs", _b(root), b"tmpfs", MS_NOSUID | MS_NODEV, b"size=1m,mode=0755"),
               f"mount the view's root on {root}")]
    steps += [(os.symlink, (text, root + link), f"make {link}") for link, text in view.links]
    locked = _mount_flags()
    for item in view.mounts:
        steps += _steps(item, root, mount, locked)
    steps += [(mount, (None, _b(root), None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
                       None), "make the view's root read-only"),
              (os.chdir, (root,), "enter the view"),
              (mount, (b".", b"/", None, MS_MOVE, None), "move the view onto /"),
              (os.chroot, (".",), "enter the view"),
              (os.chdir, (WORKSPACE,), f"enter {WORKSPACE}")]
    return steps


def _b(path: str) -> bytes:
    return os.fsencode(path)


def _map_root(uid: int, gid: int) -> list[Step]:
    def put(path: str, text: str) -> None:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    return [(put, ("/proc/self/setgroups", "deny"), "map the user to root"),
            (put, ("/proc/self/uid_map", f"0 {uid} 1"), "map the user to root"),
            (put, ("/proc/self/gid_map", f"0 {gid} 1"), "map the user to root")]


def _steps(item: Mount, root: str, mount: Callable[..., None],
           locked: dict[str, tuple[str, int]]) -> list[Step]:
    at = root + item.target
    place: list[Step] = [(_ensure, (at, item.is_dir), f"make a place for {item.target}")]
    if item.kind == "bind":
        return place + _bind(item, at, mount, locked)
    if item.kind == "tmpfs":
        data = f"size={item.size_mb}m,mode=1777".encode()
        return place + [(mount, (b"tmpfs", _b(at), b"tmpfs", MS_NOSUID | MS_NODEV, data),
                         f"mount a tmpfs on {item.target}")]
    if item.kind == "hide":                 # a file: a device it may not open (EACCES)
        if not item.is_dir:
            flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NODEV | MS_NOSUID | MS_NOEXEC
            return [(mount, (b"/dev/null", _b(at), None, MS_BIND, None), f"cover {item.target}"),
                    (mount, (None, _b(at), None, flags | _holder("/dev/null", locked), None),
                     f"cover {item.target}")]
        flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
        return [(mount, (b"tmpfs", _b(at), b"tmpfs", flags, b"size=4k,mode=0755"),
                 f"cover {item.target}")]
    if item.kind == "dev":
        return place + _dev(at, mount)
    return place                        # proc: `unshare --mount-proc` mounts it there


def _bind(item: Mount, at: str, mount: Callable[..., None],
          locked: dict[str, tuple[str, int]]) -> list[Step]:
    flags = MS_BIND | (MS_REC if item.recursive else 0)
    steps: list[Step] = [(mount, (_b(item.source), _b(at), None, flags, None),
                          f"show {item.source} at {item.target}")]
    if item.writable:
        return steps
    inner = len(item.source.rstrip("/"))
    places = [("", _holder(item.source, locked))] + [
        (point[inner:], flags) for point, (_, flags) in locked.items()
        if item.recursive and point.startswith(item.source.rstrip("/") + "/")]
    for rest, extra in places:
        steps.append((mount, (None, _b(at + rest), None, MS_REMOUNT | MS_BIND | MS_RDONLY | extra,
                              None), f"make {item.target + rest} read-only"))
    return steps


def _holder(path: str, locked: dict[str, tuple[str, int]]) -> int:
    """The flags of the mount `path` lies on."""
    best = max((point for point in locked if point == "/" or path == point
                or path.startswith(point.rstrip("/") + "/")), key=len, default="/")
    return locked.get(best, ("/", 0))[1]


def _dev(at: str, mount: Callable[..., None]) -> list[Step]:
    steps: list[Step] = []
    for name in DEVICES:
        if os.path.exists(f"/dev/{name}"):
            steps += [(_ensure, (f"{at}/{name}", False), f"make a place for /dev/{name}"),
                      (mount, (_b(f"/dev/{name}"), _b(f"{at}/{name}"), None, MS_BIND, None),
                       f"show /dev/{name}")]
    steps += [(os.symlink, (text, f"{at}/{name}"), f"make /dev/{name}")
              for name, text in DEV_LINKS]
    data = f"size={SHM_MB}m,mode=1777".encode()
    return steps + [(_ensure, (f"{at}/shm", True), "make a place for /dev/shm"),
                    (mount, (b"tmpfs", _b(f"{at}/shm"), b"tmpfs", MS_NOSUID | MS_NODEV, data),
                     "mount a tmpfs on /dev/shm")]


def _ensure(path: str, is_dir: bool) -> None:
    """`path` as a folder or an empty file, with the folders above it, where missing."""
    if os.path.lexists(path):
        return
    parent = os.path.dirname(path)
    if not os.path.lexists(parent):
        _ensure(parent, True)
    if is_dir:
        os.mkdir(path, 0o755)
    else:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))


def _mount_flags() -> dict[str, tuple[str, int]]:
    """Each mount point of this process's namespace -> (its point, the flags a read-only
    remount of it must keep: the kernel refuses to drop them in a user namespace)."""
    found: dict[str, tuple[str, int]] = {}
    try:
        with open("/proc/self/mountinfo", "rb") as lines:
            for line in lines:
                fields = line.split()
                if len(fields) < 6:
                    continue
                point = _unescape(fields[4].decode("utf-8", "surrogateescape"))
                options = fields[5].decode("ascii", "replace").split(",")
                found[point] = (point, sum(_LOCKED.get(o, 0) for o in options))
    except OSError:
        pass
    return found


def _unescape(text: str) -> str:
    """A path of /proc/self/mountinfo (`\\040` for a space, and so on)."""
    if "\\" not in text:
        return text
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\" and text[i + 1:i + 4].isdigit():
            out.append(chr(int(text[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def bwrap_args(view: View, network: bool, pid: bool) -> list[str]:
    """bubblewrap's arguments for `view` (before `--` and the program)."""
    args = ["--die-with-parent", "--cap-drop", "ALL", *([] if network else ["--unshare-net"]),
            *(["--unshare-pid", "--as-pid-1"] if pid else [])]
    for link, text in view.links:
        args += ["--symlink", text, link]
    for mount in view.mounts:
        args += _bwrap_mount(mount)
    return [*args, "--chdir", WORKSPACE, "--remount-ro", "/"]


def _bwrap_mount(mount: Mount) -> list[str]:
    if mount.kind == "bind":
        return ["--bind" if mount.writable else "--ro-bind", mount.source, mount.target]
    if mount.kind == "tmpfs":
        return ["--size", str(mount.size_mb << 20), "--perms", "1777", "--tmpfs", mount.target]
    if mount.kind == "hide":
        if not mount.is_dir:
            return ["--ro-bind", "/dev/null", mount.target]
        return ["--size", "4096", "--tmpfs", mount.target, "--remount-ro", mount.target]
    if mount.kind == "dev":
        return ["--dev", "/dev", "--size", str(SHM_MB << 20), "--perms", "1777",
                "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    return ["--proc", "/proc"]
