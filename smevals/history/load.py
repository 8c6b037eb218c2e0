"""`load_history`: the figures of each Eval at every commit that changed it or its results
(`commits.py`), read straight out of git as `report --rev` reads one commit
(`smevals.sides`), each commit once (`memo.py`), each record once per process however many
commits hold it (the blob-id reuse of store/gitindex.py)."""

from __future__ import annotations

import copy
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.history.authoring import Authoring
from smevals.history.commits import Commit, tree_ids, walk
from smevals.history.doc import FORMAT, CommitDoc, EvalRef, HistoryDoc
from smevals.history.effects import Effects
from smevals.history.marks import Marker
from smevals.history.memo import Memo
from smevals.history.point import Point, load_point, plain
from smevals.history.quiet import Quiet
from smevals.report.document import generated_at
from smevals.sides.read import SideSpec, keep
from smevals.spec.discover import find_evals
from smevals.spec.load import display_path
from smevals.store.base import SourceError
from smevals.store.gitcat import repo_and_prefix
from smevals.store.index import gc_paused


@dataclass(frozen=True)
class HistoryOptions:
    paths: tuple[str, ...]
    side: SideSpec = SideSpec()
    n: int | None = None                # at most this many commits (git log -n)
    since: str | None = None            # only commits after this revision
    first_parent: bool = False


def load_history(opts: HistoryOptions) -> HistoryDoc:
    """The history of every Eval under `opts.paths` (found in the working tree, as `report
    --rev` finds them) along HEAD; exit 2 for a bad revision or a folder outside git."""
    if opts.n is not None and opts.n < 1:
        raise SmevalsError(f"-n: {opts.n} is not a positive number of commits")
    if opts.side.rev:
        raise SmevalsError("log reads every commit of the range; it takes no --rev")
    folders = [Path(f) for f in find_evals(list(opts.paths))]
    repo, paths = _repository(folders, opts.side.store)
    history = walk(repo, sorted({p for ps in paths.values() for p in ps}), opts.n, opts.since,
                   opts.first_parent)
    changed = _changed(repo, paths, history.commits)
    with gc_paused():
        points = _points(changed, opts.side, folders)
    keep(points)
    evals = _evals(folders, points)
    return {"format": FORMAT, "generated": generated_at(),
            "range": {"n": opts.n, "since": opts.since, "first_parent": opts.first_parent},
            "commits_read": history.read, "shallow": history.shallow,
            "evals": evals,
            "commits": _commits(folders, evals, history.commits, points, Effects(opts.side),
                                Quiet(repo, paths, opts.side.store))}


def _repository(folders: list[Path], store: str | None) -> tuple[Path, dict[Path, list[str]]]:
    """The repository holding every Eval, and per Eval the paths in it whose changes list
    a commit: its folder (with its default store), and the stores given by --store."""
    repos: set[Path] = set()
    paths: dict[Path, list[str]] = {}
    for folder in folders:
        paths[folder] = []
        for path in [folder] + ([Path(store)] if store else []):
            try:
                repo, prefix = repo_and_prefix(path.absolute(), path)
            except SourceError as exc:
                raise SmevalsError(f"{exc}, so log cannot read its history") from None
            repos.add(repo)
            paths[folder].append(prefix)
    if len(repos) > 1:
        raise SmevalsError("log reads one git repository; these Evals are in "
                           + ", ".join(sorted(map(str, repos))))
    return repos.pop(), paths


def _changed(repo: Path, paths: dict[Path, list[str]],
             commits: list[Commit]) -> list[tuple[str, Path]]:
    """(commit, Eval folder), oldest first, where the Eval's paths differ from the previous
    listed commit (by git tree id): at the others its figures cannot have changed."""
    pairs = [(c.sha, folder) for c in reversed(commits) for folder in paths]
    if any("\n" in p for ps in paths.values() for p in ps):
        return pairs                    # a path git's batch input cannot take: read them all
    wanted = [(sha, p) for sha, folder in pairs for p in paths[folder]]
    ids = iter(tree_ids(repo, wanted))
    last: dict[Path, list[str]] = {}
    out = []
    for sha, folder in pairs:
        key = [next(ids) for _p in paths[folder]]
        if last.get(folder) != key:
            out.append((sha, folder))
        last[folder] = key
    return out


Points = dict[tuple[str, Path], Point]


def _points(changed: list[tuple[str, Path]], spec: SideSpec, folders: list[Path]) -> Points:
    memo = Memo(folders, spec)
    authoring = Authoring()
    out: Points = {}
    with tempfile.TemporaryDirectory(prefix="smevals-log-") as tmp:
        for sha, folder in changed:                         # oldest first
            point = memo.get(sha, folder)
            if point is None:
                point = plain(load_point(folder, sha, spec, Path(tmp), authoring))
                memo.put(sha, folder, point)
            out[(sha, folder)] = point
    memo.save()
    return out


def _evals(folders: list[Path], points: Points) -> list[EvalRef]:
    """Each Eval's name as its newest commit with figures has it (the name its rows carry;
    a commit without a store names it by its folder), else its folder's name."""
    names = {folder: folder.name for folder in folders}
    for (_sha, folder), point in points.items():            # oldest first: the newest wins
        if point["rows"]:
            names[folder] = point["rows"][0]["eval"]
    return [{"eval": names[f], "path": display_path(f)} for f in folders]


def _commits(folders: list[Path], evals: list[EvalRef], commits: list[Commit],
             points: Points, effects: Effects, quiet: Quiet) -> list[CommitDoc]:
    names = {folder: ref["eval"] for folder, ref in zip(folders, evals, strict=True)}
    marker = Marker(effects)
    last: dict[Path, tuple[str, Point]] = {}                # each Eval's previous point
    docs: list[CommitDoc] = []
    for commit in reversed(commits):                        # oldest first, for the marks
        doc: CommitDoc = {"sha": commit.sha, "short": commit.sha[:7], "subject": commit.subject,
                          "date": commit.date, "author": commit.author,
                          "parents": list(commit.parents), "evals": [], "damage": 0,
                          "rows": [], "notes": [], "other_files": []}
        for folder in folders:
            point = points.get((commit.sha, folder))
            if point is None:
                continue
            before, last[folder] = last.get(folder), (commit.sha, point)
            files = quiet.files(folder, before, (commit.sha, point)) if before else None
            if files is not None:                           # changed no figure: said so
                doc["other_files"] += files
                continue
            _add(doc, folder, names[folder], point, marker)
        docs.append(doc)
    docs.reverse()
    effects.save()
    return docs


def _add(doc: CommitDoc, folder: Path, name: str, point: Point, marker: Marker) -> None:
    """One Eval's point at the commit: its rows, marked, its damage and notes."""
    if point["present"]:
        doc["evals"].append(name)
    doc["damage"] += point["damage"]
    doc["notes"] += [f"{display_path(folder)}: {note}" for note in point["notes"]]
    for row, identity in zip(point["rows"], point["identities"], strict=True):
        row = copy.copy(row)
        marker.mark((os.fspath(folder), row["config"], row["model"]), row, identity, doc["sha"])
        doc["rows"].append(row)
