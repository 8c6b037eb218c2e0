"""The History page of one Eval, and the diff page of each of its commits.

`data/<eval>/history.js` is the Eval's history as `smevals log --format json` gives it (the
commits that changed its results or the Eval, newest first, with one row per config x
model), each commit marked with whether a diff page exists for it. That diff page,
`data/<eval>/diffs/<sha>.js`, is the data of `smevals diff <first parent> <sha> --format
json` for the Eval, shaped as the `--diff A B` page is. `build --history N` writes them all;
`serve` makes them on request and reads the history again when the repository's HEAD moves
(`LiveHistory`).
"""

from __future__ import annotations

import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from smevals.diff import pairs
from smevals.errors import SmevalsError
from smevals.files import gitcat
from smevals.files.gitcat import SourceError
from smevals.history.doc import FORMAT as HISTORY_FORMAT
from smevals.history.doc import HistoryDoc
from smevals.history.load import HistoryOptions, load_history
from smevals.report import taskpass
from smevals.report.document import generated_at
from smevals.sides.read import SideSpec
from smevals.sides.reuse import Reuse
from smevals.site.data import FORMAT

DEFAULT_COMMITS = 20        # `serve`'s History page, in a git repository
MAX_COMMITS = 1000
DIFF_CACHE = 64             # diff pages `serve` keeps (a commit's diff never changes)
SHA = frozenset("0123456789abcdef")
SHARED_SECONDS = 0.25       # the Evals of a Suite ask git for HEAD once per look
_HEADS: dict[Path, tuple[float, str | None]] = {}


@dataclass(frozen=True)
class HistorySpec:
    """What the History page reads: the last `n` commits, Grades of `grader`."""

    n: int
    grader: str = "default"
    store: str | None = None
    task_pass: str = taskpass.DEFAULT


def check_count(n: int) -> None:
    if not 1 <= n <= MAX_COMMITS:
        raise SmevalsError(f"--history {n}: give a number of commits from 1 to {MAX_COMMITS}")


def repo_of(folder: Path) -> Path:
    """The top of the git repository holding `folder` (exit 2 when it is in none)."""
    try:
        return gitcat.repo_and_prefix(folder.absolute(), folder)[0]
    except SourceError as exc:
        raise SmevalsError(f"--history: {exc}") from None


def head_of(repo: Path, reuse: float = 0.0) -> str | None:
    """The commit HEAD names in `repo` (None: none yet), or the answer given less than
    `reuse` seconds ago (the Evals of a Suite share one repository)."""
    now = time.monotonic()
    seen = _HEADS.get(repo)
    if seen is not None and now - seen[0] < reuse:
        return seen[1]
    try:
        out = gitcat.git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}",
                         what="HEAD", detail=False)
        head: str | None = out.decode().strip()
    except SourceError:
        head = None
    _HEADS[repo] = (now, head)
    return head


def repo_head(folder: Path) -> str:
    """The commit HEAD names in the repository holding `folder` (exit 2 when there is none:
    not a repository, or no commit yet)."""
    head = head_of(repo_of(folder))
    if head is None:
        raise SmevalsError(f"--history: {folder}: the repository has no commit yet")
    return head


def eval_history(folder: Path, spec: HistorySpec) -> HistoryDoc:
    """The history of the Eval in `folder` (`smevals log -n N --format json` of it)."""
    side = SideSpec(spec.grader, None, spec.store)
    return load_history(HistoryOptions((str(folder),), side, n=spec.n))


def empty(spec: HistorySpec) -> HistoryDoc:
    """A history of no commit."""
    return {"format": HISTORY_FORMAT, "generated": generated_at(),
            "range": {"n": spec.n, "since": None, "first_parent": False},
            "commits_read": 0, "shallow": False, "evals": [], "commits": []}


def history_page(slug: str, name: str, doc: HistoryDoc, diffable: Collection[str]) -> \
        dict[str, Any]:
    """`data/<eval>/history.js`: the history, each commit saying whether it has a diff page."""
    return {"format": FORMAT, "kind": "history", "eval": slug, "name": name,
            "generated": doc.get("generated"), "range": doc.get("range"),
            "commits_read": doc.get("commits_read"), "shallow": doc.get("shallow"),
            "commits": [{**c, "diff": c.get("sha") in diffable} for c in doc.get("commits", [])]}


def diff_page(slug: str, doc: Mapping[str, Any], entry: Mapping[str, Any]) -> dict[str, Any]:
    """A diff page's data: one Eval's entry of `smevals diff --format json`."""
    return {"format": FORMAT, "kind": "diff", "eval": slug, "a": doc.get("a"), "b": doc.get("b"),
            "alpha": doc.get("alpha"), "ci_level": doc.get("ci_level"), "diff": entry}


def commit_diff(slug: str, folder: Path, spec: HistorySpec, commit: Mapping[str, Any],
                reuse: Reuse | None = None) -> dict[str, Any] | None:
    """The diff page of `commit` against its first parent; None for a root commit, or a
    parent this (shallow) clone does not have. `reuse` keeps what one diff read for the
    next (sides/reuse.py: a commit's side is the next commit's parent side)."""
    parents = commit.get("parents") or []
    sha = str(commit.get("sha", ""))
    if not parents or not is_sha(sha) or not is_sha(str(parents[0])):
        return None
    revs = [str(parents[0]), sha]
    opts = pairs.DiffOptions((*revs, str(folder)), SideSpec(spec.grader, None, spec.store),
                             fmt="json", task_pass=spec.task_pass)
    try:
        result = pairs.diff(opts, [str(folder)], revs, reuse)
    except SmevalsError:
        return None
    doc = orjson.loads(result.text)
    entries = doc.get("evals") or []
    if len(entries) != 1:
        return None
    for side, rev in zip(("a", "b"), revs, strict=True):
        if isinstance(doc.get(side), dict):
            doc[side]["label"] = rev[:7]
    return diff_page(slug, doc, entries[0])


def present(folder: Path, shas: set[str]) -> set[str]:
    """The commits among `shas` that the repository holding `folder` has."""
    ordered = sorted(s for s in shas if is_sha(s))
    if not ordered:
        return set()
    try:
        repo, _prefix = gitcat.repo_and_prefix(folder.absolute(), folder)
        proc = subprocess.run(["git", "-C", str(repo), "cat-file", "--batch-check"],
                              input="".join(f"{s}\n" for s in ordered).encode(),
                              capture_output=True, check=False)
    except (SourceError, OSError):
        return set()
    lines = proc.stdout.decode("utf-8", "replace").splitlines()
    return {s for s, line in zip(ordered, lines, strict=False) if f"{s} commit " in line}


def is_sha(text: str) -> bool:
    return len(text) == 40 and set(text) <= SHA


def commit_diffs(slug: str, folder: Path, spec: HistorySpec,
                 doc: HistoryDoc) -> dict[str, dict[str, Any]]:
    """Every listed commit's diff page, by commit (newest first, so that each reads its
    parent's side once and the next diff finds it kept)."""
    out = {}
    with Reuse() as reuse:
        for commit in doc.get("commits", []):
            page = commit_diff(slug, folder, spec, commit, reuse)
            if page is not None:
                out[str(commit["sha"])] = page
    return out


class LiveHistory:
    """`serve`'s History page of one Eval: read again when HEAD moves; diff pages made on
    request for the commits listed, and kept (a commit's diff never changes)."""

    def __init__(self, folder: Path, spec: HistorySpec):
        self.folder = folder
        self.spec = spec
        self.lock = threading.Lock()
        try:
            self.repo: Path | None = repo_of(folder)
        except SmevalsError:
            self.repo = None
        self.head = self.head_now()
        self.doc: HistoryDoc | None = None
        self.read_at: str | None = None
        self.error: str | None = None
        self.diffs: OrderedDict[str, dict[str, Any] | None] = OrderedDict()
        self.reuse: Reuse | None = None     # made at the first diff, kept while serve runs

    def head_now(self) -> str | None:
        return None if self.repo is None else head_of(self.repo, SHARED_SECONDS)

    def check(self) -> str | None:
        """The current HEAD (looked at now); the history is read again on next use when it moved."""
        self.head = self.head_now()
        return self.head

    def current(self) -> HistoryDoc:
        """The history at HEAD; when it cannot be read (HEAD names no commit, say), the
        last good reading, or none, with `error` saying why."""
        with self.lock:
            if self.doc is None or self.read_at != self.head:
                self.read_at = self.head
                try:
                    if self.head is None:
                        raise SmevalsError(f"{self.folder}: HEAD names no commit")
                    self.doc, self.error = eval_history(self.folder, self.spec), None
                except SmevalsError as exc:
                    self.doc, self.error = self.doc or empty(self.spec), str(exc)
            return self.doc

    def page(self, slug: str, name: str) -> dict[str, Any]:
        doc = self.current()
        with_parent = {str(c["sha"]): str(c["parents"][0]) for c in doc.get("commits", [])
                       if c.get("parents")}
        if doc.get("shallow"):          # the oldest commits' parents may not be in the clone
            held = present(self.folder, set(with_parent.values()))
            with_parent = {sha: p for sha, p in with_parent.items() if p in held}
        return {**history_page(slug, name, doc, set(with_parent)), "error": self.error}

    def diff(self, slug: str, sha: str) -> dict[str, Any] | None:
        """The diff page of a listed commit (None for any other name)."""
        commit = next((c for c in self.current().get("commits", []) if c.get("sha") == sha),
                      None)
        if commit is None:
            return None
        with self.lock:
            if sha not in self.diffs:
                self.reuse = self.reuse or Reuse()
                self.diffs[sha] = commit_diff(slug, self.folder, self.spec, commit, self.reuse)
                while len(self.diffs) > DIFF_CACHE:
                    self.diffs.popitem(last=False)
            return self.diffs[sha]
