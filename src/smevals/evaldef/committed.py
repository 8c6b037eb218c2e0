"""An Eval's authoring files as committed at a git revision, without a checkout.

`report --rev` and `diff` need the grader, tasks and configs as they were at a revision:
the grader gives the current version there, tasks and configs tell current Runs from
stale ones. The Eval folder (without its store) is extracted with `git archive` into a
temporary folder that mirrors the repository layout, and loaded from there. A runner or
checker program named by a relative path outside the Eval folder is fetched from the same
revision; a bare program name is looked up on PATH as usual.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from smevals.errors import SmevalsError, SpecError
from smevals.evaldef.discover import SKIP_DIRS
from smevals.evaldef.load import load_eval
from smevals.evaldef.model import Eval
from smevals.evaldef.programs import ProgramError, at_revision, confine
from smevals.files import gitcat
from smevals.files.gitcat import SourceError

# (folder a path is relative to, the path or a bare name on PATH) of each program an Eval uses
Programs = Callable[[Eval], list[tuple[Path, str]]]


@dataclass(frozen=True)
class Revision:
    rev: str
    repo: Path
    commit: str

    def label(self) -> str:
        return f"{self.rev} ({self.commit[:12]})"


def git(cwd: Path, *args: str, what: str) -> bytes:
    """stdout of `git -C cwd args`, or exit 2 saying `what` (and git's first line)."""
    try:
        return gitcat.git(cwd, *args, what=what)
    except SourceError as exc:
        raise SmevalsError(str(exc)) from None


def resolve(path: Path, rev: str) -> Revision:
    """The repository holding `path` and the commit `rev` names (else exit 2)."""
    try:
        repo, _prefix = gitcat.repo_and_prefix(path.absolute(), path)
    except SourceError as exc:
        raise SmevalsError(f"{exc}, so --rev/diff cannot read '{rev}'") from None
    try:
        commit = gitcat.commit_id(repo, rev, what=f"unknown revision '{rev}'")
    except SourceError as exc:
        raise SmevalsError(_no_commits(repo, rev) or str(exc)) from None
    return Revision(rev, repo, commit)


def _no_commits(repo: Path, rev: str) -> str | None:
    """Why `rev` names no commit when there are none yet (in the repository, or on the
    current branch for HEAD), else None."""
    try:
        gitcat.git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", what="HEAD")
        return None
    except SourceError:
        pass
    refs = git(repo, "for-each-ref", "--count=1", "--format=%(refname)", what="git for-each-ref")
    if not refs.strip():
        where = "the git repository"
    elif rev.startswith(("HEAD", "@")):
        where = "the current branch of"
    else:
        return None
    return (f"{where} {repo} has no commits yet, so there is no revision '{rev}' to read: "
            "commit the Eval and its results first (git add, git commit)")


def repo_path(revision: Revision, path: Path) -> str:
    """`path` relative to the repository, with / separators ("" for the top)."""
    real = Path(os.path.realpath(path))
    try:
        rel = real.relative_to(revision.repo).as_posix()
    except ValueError:
        raise SmevalsError(f"{path} is not inside the git repository {revision.repo}") from None
    return "" if rel == "." else rel


def eval_at(ev_dir: Path, revision: Revision, store_dir: Path | None, into: Path,
            programs: Programs) -> Eval:
    """Load the Eval in `ev_dir` as committed at `revision`, extracted below `into`, without
    its store folder `store_dir` (when the store lies inside the Eval). `programs(ev)` names
    the program paths the Eval's configs and graders use (the layers above know which
    names are built-in runners and checkers), to be fetched from the same revision."""
    prefix = repo_path(revision, ev_dir)
    mirror = into / revision.commit / revision.repo.name
    confine(mirror, revision.repo)
    skip = repo_path(revision, store_dir) if store_dir is not None else None
    where = f"{revision.rev}:{prefix or '.'}"
    folder = mirror / prefix if prefix else mirror
    if not (folder / "eval.yaml").is_file():
        entries = [e for e in _children(revision, prefix) if e[3] != skip]
        if not entries:
            raise SmevalsError(f"{ev_dir}: no Eval at revision {revision.label()}")
        _extract_all(revision, entries, mirror)
    if not (folder / "eval.yaml").is_file():
        raise SmevalsError(f"{ev_dir}: no eval.yaml at revision {revision.label()}")
    try:
        ev = load_eval(folder, cached=False)      # a folder made for this read
    except SpecError as exc:
        raise SmevalsError(f"{where}: invalid Eval at that revision:\n"
                           + str(exc).replace(str(folder), where)) from None
    _fetch_programs(programs(ev), revision, mirror)
    return ev


def _children(revision: Revision, prefix: str) -> list[tuple[str, str, str, str]]:
    """(mode, type, object id, path) of the entries directly inside the folder `prefix` at
    the revision. Not recursive, so a large store beside them costs nothing."""
    return _ls_tree(revision, [f":(literal){prefix}/"] if prefix else [])


def _ls_tree(revision: Revision, specs: list[str]) -> list[tuple[str, str, str, str]]:
    """(mode, type, object id, path) of each entry `git ls-tree` lists for `specs`."""
    try:
        out = gitcat.git_by_id(revision.repo, "ls-tree", "-z", revision.commit, "--", *specs,
                               what="git ls-tree")
    except SourceError as exc:
        raise SmevalsError(str(exc)) from None
    entries = []
    for item in out.decode("utf-8", "surrogateescape").split("\0"):
        if item:
            meta, path = item.split("\t", 1)
            mode, kind, oid = meta.split()
            entries.append((mode, kind, oid, path))
    return entries


def _extract_all(revision: Revision, entries: list[tuple[str, str, str, str]],
                 mirror: Path) -> None:
    """Write the entries (folders, and files but symbolic links) below `mirror` from one
    `git archive` of the commit limited to their paths: git walks no other folder, so a
    large store beside them costs nothing, and one process reads them all."""
    paths = [path for mode, kind, _oid, path in entries
             if kind == "tree" or (kind == "blob" and mode != "120000")]
    if not paths:
        return
    data = git(revision.repo, "archive", "--format=tar", revision.commit, "--",
               *(f":(literal){path}" for path in paths),
               what=f"cannot read {paths[0].rpartition('/')[0] or '.'} at revision "
                    f"{revision.label()}")
    import tarfile  # here: only a read at a revision needs it

    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        archive.extractall(mirror, filter="data")


def _fetch_programs(wanted: list[tuple[Path, str]], revision: Revision, mirror: Path) -> None:
    """Bring in the files named by paths that lie outside the extracted Eval (relative, or
    absolute inside the repository): runner and checker programs, replay responses.
    `wanted` gives (folder the path is relative to, path or bare name) pairs."""
    for base, spec in wanted:
        spec = spec.strip()
        if "/" not in spec and "\\" not in spec:
            spec = shutil.which(spec) or ""     # a bare name: on PATH, maybe in the repository
        try:
            target = at_revision(Path(spec), base) if spec else None
        except ProgramError:
            continue                # resolution says why, where the path is used
        if target is not None:
            _fetch(revision, mirror, target)


def _fetch(revision: Revision, mirror: Path, target: Path) -> None:
    if target.exists():
        return
    try:
        rel = target.relative_to(mirror).as_posix()
    except ValueError:
        return                      # outside the repository: not versioned, used as it is
    listing = _ls_tree(revision, [f":(literal){rel}"])
    if not listing:
        return
    if listing[0][1] == "blob":     # a folder is no program (and a symbolic link is skipped)
        _extract_all(revision, listing[:1], mirror)


def evals_at(revision: Revision, folder: Path) -> list[Path]:
    """The Eval folders under `folder` at the revision, found as `find_evals` finds them in
    the working tree (a folder with eval.yaml; a store folder is not searched), one
    non-recursive listing per folder."""
    found: list[Path] = []
    _walk_at(revision, repo_path(revision, folder), folder, found)
    return found


def _walk_at(revision: Revision, prefix: str, shown: Path, found: list[Path]) -> None:
    entries = _children(revision, prefix)
    names = {Path(e[3]).name: e for e in entries}
    if names.get("eval.yaml", ("", "tree"))[1] == "blob":
        found.append(shown)
        return
    if any(names.get(n, ("", "blob"))[1] == "tree" for n in ("runs", "grades")):
        return
    for name in sorted(names):
        entry = names[name]
        if entry[1] == "tree" and not name.startswith(".") and name not in SKIP_DIRS:
            _walk_at(revision, entry[3], shown / name, found)
