"""Talking to git: run a command, list trees, and stream blobs through `git cat-file --batch`."""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Generator, Iterable
from pathlib import Path
from typing import IO, TYPE_CHECKING, NamedTuple, cast

if TYPE_CHECKING:
    import hashlib

from smevals import scope
from smevals.files.regular import RECORD_LIMIT_SETTING, over_limit


class SourceError(Exception):
    """The store cannot be read at all (not a git repository, unknown revision, git not
    installed, ...): what git could not give."""


WORKERS = 2                 # cat-file processes reading at once (git does the inflating)
_BUFFER = 1 << 20


def git(cwd: Path, *args: str, what: str, detail: bool = True) -> bytes:
    """stdout of `git -C cwd args`, or SourceError saying `what` (and git's first line)."""
    try:
        proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise SourceError("git is not installed") from None
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SourceError(what + (f": {said[0]}" if said and detail else ""))
    return proc.stdout


_OBJECT_ID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_KEPT: dict[tuple[str, ...], bytes] = {}
_KEEP_BYTES = 32 << 20          # what a long-lived process (`serve`) keeps, at most
_kept_bytes = [0]


def git_by_id(cwd: Path, *args: str, what: str) -> bytes:
    """`git` for a question about an object named by its id (a commit's listing, whether
    an id names a commit): its answer never changes, so the process asks git once."""
    key = (os.fspath(cwd), *args)
    found = _KEPT.get(key)
    if found is None:
        found = _keep(key, git(cwd, *args, what=what))
    return found


def _keep(key: tuple[str, ...], answer: bytes) -> bytes:
    """Keep git's `answer` to `key`, within _KEEP_BYTES (all forgotten when it is passed)."""
    if _kept_bytes[0] + len(answer) > _KEEP_BYTES:
        _KEPT.clear()
        _kept_bytes[0] = 0
    _KEPT[key] = answer
    _kept_bytes[0] += len(answer)
    return answer


def _verify(rev: str) -> tuple[str, ...]:
    """git's arguments for the commit `rev` names."""
    return ("rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}")


def commit_id(cwd: Path, rev: str, what: str) -> str:
    """The id of the commit `rev` names (SourceError saying `what` if none): asked of git
    once per process when `rev` is an object id (`known_commits` may have answered)."""
    ask = git_by_id if is_object_id(rev) else git
    return ask(cwd, *_verify(rev), what=what).decode().strip()


def known_commits(cwd: Path, ids: Iterable[str]) -> None:
    """Note that `ids` name commits of the repository at `cwd` (git listed them as such),
    so that `commit_id` need not ask git about them."""
    for one in ids:
        key = (os.fspath(cwd), *_verify(one))
        if is_object_id(one) and key not in _KEPT:
            _keep(key, f"{one}\n".encode())


def is_object_id(text: str) -> bool:
    """Whether `text` is a full object id (SHA-1 or SHA-256), not a name that can move."""
    return _OBJECT_ID.fullmatch(text) is not None


def repo_and_prefix(root: Path, shown: Path) -> tuple[Path, str]:
    """The top of the git work tree holding `root`, and `root` relative to it (asked of
    git once per folder and command: a command makes no repository)."""
    probe = root
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    tops = scope.current().memo(__name__)
    top = tops.get(probe)
    if top is None:
        top = tops[probe] = git(probe, "rev-parse", "--show-toplevel", detail=False,
                                what=f"{shown} is not inside a git repository").decode().strip()
    repo = Path(top).resolve()
    real = Path(os.path.realpath(root))
    try:
        prefix = real.relative_to(repo).as_posix()
    except ValueError:
        raise SourceError(f"{shown} is not inside the git repository {repo}") from None
    return repo, "" if prefix == "." else prefix


def ls_trees(repo: Path, commit: str, paths: list[str]) -> bytes:
    """`git ls-tree -r -z` of each path (literal, from the top), all listed at once."""
    started = [ls_tree_start(repo, "--full-tree", commit, "--", f":(literal){path}")
               for path in paths]
    return b"".join(ls_tree_result(one) for one in started)


Started = tuple["subprocess.Popen[bytes]", IO[bytes]]


def ls_tree_start(repo: Path, *args: str) -> Started:
    """`git ls-tree -r -z ARGS` started in the background (output to a temp file)."""
    out = tempfile.TemporaryFile()  # noqa: SIM115  (closed by ls_tree_result)
    try:
        proc = subprocess.Popen(["git", "-C", str(repo), "ls-tree", "-r", "-z", *args],
                                stdout=out, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        out.close()
        raise SourceError("git is not installed") from None
    return proc, out


def ls_tree_result(started: Started) -> bytes:
    """The output of a listing started by `ls_tree_start` (waits for it)."""
    proc, out = started
    with out:
        _stdout, err = proc.communicate()
        if proc.returncode != 0:
            raise SourceError("cannot list the store: " + err.decode("utf-8", "replace"))
        out.seek(0)
        return out.read()


class Digest(NamedTuple):
    """A blob's size and sha256, hashed as it streamed past (its bytes never held)."""

    size: int
    sha256: str


Content = bytes | Digest | None


def cat_many(repo: Path, blobs: list[str], workers: int = WORKERS,
             hashed: list[bool] | None = None) -> list[Content]:
    """The contents of `blobs` in order, read by `workers` cat-file processes at once; a blob
    whose `hashed` flag is set comes as its Digest (a large artifact never sits in memory)."""
    flags = hashed if hashed is not None else [False] * len(blobs)
    if workers <= 1 or len(blobs) < 1000:
        return _drain(repo, blobs, flags)
    size = -(-len(blobs) // workers)
    parts: list[list[Content]] = [[] for _ in range(workers)]
    errors: list[BaseException] = []

    def work(i: int) -> None:
        part = slice(i * size, (i + 1) * size)
        try:
            parts[i] = _drain(repo, blobs[part], flags[part])
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return [data for part in parts for data in part]


def _drain(repo: Path, blobs: list[str], hashed: list[bool]) -> list[Content]:
    stream = cat_files(repo, blobs, hashed=hashed)
    try:
        return [cast(Content, next(stream)) for _ in blobs]     # no limit: never a str
    finally:
        stream.close()


def cat_files(repo: Path, blobs: Iterable[str], limit: int | None = None,
              hashed: list[bool] | None = None
              ) -> Generator[bytes | Digest | str | None, None, None]:
    """The contents of `blobs` in order (None for a missing one), streamed through one
    `git cat-file --batch` fed from a thread so that neither pipe can fill up. The caller
    takes exactly as many items as it gave blobs, then closes the generator. With `limit`
    (records), a blob above it is skipped unread and given as a str saying its size; a blob
    whose `hashed` flag is set is given as its Digest."""
    try:
        proc = subprocess.Popen(["git", "-C", str(repo), "cat-file", "--batch", "--buffer"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, bufsize=_BUFFER)
    except FileNotFoundError:
        raise SourceError("git is not installed") from None
    assert proc.stdin is not None and proc.stdout is not None
    feeder = threading.Thread(target=_feed, args=(proc.stdin, blobs), daemon=True)
    feeder.start()
    try:
        index = 0
        while True:
            digest = hashed is not None and index < len(hashed) and hashed[index]
            yield _response(proc.stdout, limit, digest)
            index += 1
    finally:
        proc.stdout.close()
        proc.kill()
        proc.wait()
        feeder.join()


def _feed(pipe: IO[bytes], blobs: Iterable[str]) -> None:
    batch: list[bytes] = []
    try:
        for blob in blobs:
            batch.append(blob.encode() + b"\n")
            if len(batch) >= 512:
                pipe.write(b"".join(batch))
                batch.clear()
        pipe.write(b"".join(batch))
        pipe.close()
    except (OSError, ValueError):
        return


def _skip(out: IO[bytes], size: int, digest: hashlib._Hash | None = None) -> None:
    while size > 0:
        chunk = out.read(min(size, 1 << 20))
        if not chunk:
            raise SourceError("git cat-file stopped in the middle of an object")
        size -= len(chunk)
        if digest is not None:
            digest.update(chunk)


def _response(out: IO[bytes], limit: int | None = None,
              hashed: bool = False) -> bytes | Digest | str | None:
    header = out.readline()
    if not header:
        raise SourceError("git cat-file stopped before giving every object")
    parts = header.split()
    if len(parts) < 3 or parts[1] == b"missing":
        return None
    size = int(parts[2])
    if hashed:
        import hashlib

        digest = hashlib.sha256()
        _skip(out, size, digest)    # hashed in pieces, never held in memory
        out.read(1)
        return Digest(size, digest.hexdigest())
    if limit is not None and size > limit:
        _skip(out, size + 1)        # the blob and its newline, never held in memory
        return over_limit(size, limit, "a record", RECORD_LIMIT_SETTING)
    data = out.read(size)
    out.read(1)
    return data
