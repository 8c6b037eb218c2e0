"""Where a store's bytes come from: the working tree, or a git revision (no checkout)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from smevals.store.objects import RECORD_NAMES, STAGING

DEPTH = {"run": 3, "grade": 4}   # folder levels between the kind folder and the objects


class Source(Protocol):
    label: str

    def records(self, kind: str) -> Iterator[tuple[str, bytes]]:
        """(object folder relative to the store root, record bytes) for every object."""
        ...

    def read(self, rel: str) -> bytes:
        """The bytes of one file, by path relative to the store root."""
        ...

    def listing(self, rel: str) -> list[tuple[str, int, str | None]]:
        """(path inside the object, size, symlink target or None) of every file in an object."""
        ...


class SourceError(Exception):
    pass


class FsSource:
    """The store as it is in the working tree."""

    def __init__(self, root: Path):
        self.root = root
        self.label = str(root)

    def object_dirs(self, kind: str) -> Iterator[str]:
        base = self.root / f"{kind}s"
        yield from _dirs_at_depth(str(base), f"{kind}s", DEPTH[kind])

    def records(self, kind: str) -> Iterator[tuple[str, bytes]]:
        name = RECORD_NAMES[kind]
        for rel in self.object_dirs(kind):
            try:
                with open(os.path.join(self.root, rel, name), "rb") as handle:
                    yield rel, handle.read()
            except OSError:
                yield rel, b""

    def read(self, rel: str) -> bytes:
        return (self.root / rel).read_bytes()

    def listing(self, rel: str) -> list[tuple[str, int, str | None]]:
        folder = self.root / rel
        out: list[tuple[str, int, str | None]] = []
        for current, dirs, files in os.walk(folder):
            links = [d for d in dirs if os.path.islink(os.path.join(current, d))]
            dirs[:] = [d for d in dirs if d not in links]
            for name in files + links:
                path = os.path.join(current, name)
                rel_path = os.path.relpath(path, folder).replace(os.sep, "/")
                target = os.readlink(path) if os.path.islink(path) else None
                out.append((rel_path, 0 if target else os.path.getsize(path), target))
        return sorted(out)


def _dirs_at_depth(path: str, rel: str, depth: int) -> Iterator[str]:
    try:
        with os.scandir(path) as it:
            entries = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in it)
    except OSError:
        return
    for name, is_dir in entries:
        if not is_dir or name.startswith("."):
            continue
        if depth == 0:
            yield f"{rel}/{name}"
        else:
            yield from _dirs_at_depth(os.path.join(path, name), f"{rel}/{name}", depth - 1)


class GitSource:
    """The store as committed at a revision, read with `git ls-tree` and one `git cat-file --batch`."""

    def __init__(self, root: Path, rev: str):
        self.root = root.absolute()
        self.rev = rev
        self.label = f"{rev}:{root}"
        self.repo, self.prefix = _repo_and_prefix(self.root)
        self.commit = _git(self.repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}",
                           what=f"unknown revision '{rev}'").strip()
        self._tree: dict[str, tuple[str, int, str]] | None = None

    def tree(self) -> dict[str, tuple[str, int, str]]:
        """path relative to the store root -> (blob id, size, mode)."""
        if self._tree is None:
            out = _git(self.repo, "ls-tree", "-r", "-z", "--long", "--full-tree", self.commit,
                       "--", self.prefix or ".", what="cannot list the store")
            self._tree = _parse_tree(out, self.prefix)
        return self._tree

    def records(self, kind: str) -> Iterator[tuple[str, bytes]]:
        name = "/" + RECORD_NAMES[kind]
        want = [(p[: -len(name)], blob) for p, (blob, _s, _m) in self.tree().items()
                if p.endswith(name) and p.startswith(f"{kind}s/")
                and p.count("/") == DEPTH[kind] + 2]
        want.sort()
        blobs = self._cat([blob for _rel, blob in want])
        for (rel, _blob), data in zip(want, blobs, strict=True):
            yield rel, data

    def read(self, rel: str) -> bytes:
        entry = self.tree().get(rel)
        if entry is None:
            raise FileNotFoundError(f"{rel} is not in {self.rev}")
        return self._cat([entry[0]])[0]

    def read_many(self, rels: list[str]) -> list[bytes]:
        return self._cat([self.tree()[r][0] for r in rels])

    def listing(self, rel: str) -> list[tuple[str, int, str | None]]:
        start = rel + "/"
        out: list[tuple[str, int, str | None]] = []
        for path, (blob, size, mode) in self.tree().items():
            if path.startswith(start):
                target = self.read(path).decode("utf-8", "replace") if mode == "120000" else None
                out.append((path[len(start):], size, target))
        return sorted(out)

    def _cat(self, blobs: list[str]) -> list[bytes]:
        if not blobs:
            return []
        proc = subprocess.run(["git", "-C", str(self.repo), "cat-file", "--batch"],
                              input=b"".join(b.encode() + b"\n" for b in blobs),
                              capture_output=True, check=False)
        if proc.returncode != 0:
            raise SourceError(proc.stderr.decode("utf-8", "replace").strip())
        return _parse_batch(proc.stdout, len(blobs))


def _parse_tree(out: str, prefix: str) -> dict[str, tuple[str, int, str]]:
    tree: dict[str, tuple[str, int, str]] = {}
    cut = len(prefix) + 1 if prefix else 0
    for item in out.split("\0"):
        if not item:
            continue
        meta, path = item.split("\t", 1)
        mode, kind, blob, size = meta.split()
        if kind != "blob" or STAGING in path.split("/"):
            continue
        tree[path[cut:]] = (blob, int(size) if size != "-" else 0, mode)
    return tree


def _parse_batch(data: bytes, count: int) -> list[bytes]:
    out: list[bytes] = []
    pos = 0
    for _ in range(count):
        end = data.index(b"\n", pos)
        header = data[pos:end].split()
        size = int(header[2])
        out.append(data[end + 1 : end + 1 + size])
        pos = end + 1 + size + 1
    return out


def _repo_and_prefix(root: Path) -> tuple[Path, str]:
    probe = root
    while not probe.exists():
        probe = probe.parent
    top = _git(probe, "rev-parse", "--show-toplevel", what=f"{root} is not inside a git repository")
    repo = Path(top.strip()).resolve()
    real = Path(os.path.realpath(root))
    try:
        prefix = real.relative_to(repo).as_posix()
    except ValueError:
        raise SourceError(f"{root} is not inside the git repository {repo}") from None
    return repo, "" if prefix == "." else prefix


def _git(cwd: Path, *args: str, what: str) -> str:
    try:
        proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise SourceError("git is not installed") from None
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SourceError(what + (f": {detail[0]}" if detail else ""))
    return proc.stdout.decode("utf-8", "surrogateescape")
