"""A minimal reader of an Eval's history, in the shape of `smevals log --format json`
(until the history layer, `smevals.history.load_history`, takes its place).

Each of the last `n` commits that touched the Eval's folder (or its store) is read as
`report --rev C` reads it, and its leaderboard entries become the commit's rows.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from smevals.errors import SmevalsError
from smevals.report.document import generated_at
from smevals.report.formats import group_json
from smevals.report.summary import Group
from smevals.sides.read import NoStore, SideSpec, load_side
from smevals.site.data import mean_interval
from smevals.spec.committed import git
from smevals.store import gitcat
from smevals.store.base import SourceError
from smevals.store.read import store_root

HistoryDoc = dict[str, Any]
SEP = "\x1f"


def load_history(folders: list[Path], n: int, grader: str = "default",
                 store: str | None = None) -> HistoryDoc:
    """The history of the Evals in `folders` over the last `n` commits that touched them."""
    folder = folders[0]
    try:
        repo, prefix = gitcat.repo_and_prefix(folder.absolute(), folder)
    except SourceError as exc:
        raise SmevalsError(str(exc)) from None
    specs = [prefix or "."] + ([str(store_root(folder, "", store))] if store else [])
    log = git(repo, "log", f"-n{n}", f"--format=%H{SEP}%h{SEP}%s{SEP}%aI{SEP}%an{SEP}%P",
              "--", *specs, what="git log").decode("utf-8", "replace")
    shallow = git(repo, "rev-parse", "--is-shallow-repository", what="git").strip() == b"true"
    read = int(git(repo, "rev-list", "--count", "HEAD", what="git").strip() or 0)
    commits = [_commit(line, folder, grader, store) for line in log.splitlines() if line]
    _mark(commits)
    return {"format": 1, "generated": generated_at(),
            "range": {"n": n, "since": None, "first_parent": False},
            "commits_read": read, "shallow": shallow,
            "evals": [{"eval": f.name, "path": str(f)} for f in folders], "commits": commits}


def _commit(line: str, folder: Path, grader: str, store: str | None) -> dict[str, Any]:
    sha, short, subject, date, author, parents = (line.split(SEP) + [""] * 6)[:6]
    rows: list[dict[str, Any]] = []
    damage = 0
    with tempfile.TemporaryDirectory(prefix="smevals-history-") as tmp:
        try:
            side = load_side(folder, SideSpec(grader, sha, store), Path(tmp))
        except NoStore:
            side = None
        if side is not None:
            damage = len(side.report.damaged)
            for group in side.report.groups:
                rows.append(_row(side.report.name, group, side.report.version, damage))
    when = datetime.fromisoformat(date).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"sha": sha, "short": short, "subject": subject, "date": when, "author": author,
            "parents": parents.split(), "damage": damage, "rows": rows}


def _row(name: str, group: Group, version: str, damage: int) -> dict[str, Any]:
    entry = group_json(group, 0)
    return {"eval": name, "config": group.config, "model": group.model, "runs": group.n,
            "graded": group.n, "passed": entry["passed"], "failed": entry["failed"],
            "scored": entry["scored"], "mean": entry["mean"], "stderr": entry["stderr"],
            "mean_ci": mean_interval(group), "pass_rate": entry["pass_rate"],
            "pass_rate_ci": entry["pass_rate_ci"], "grader_version": version,
            "damage": damage, "marks": []}


def _mark(commits: list[dict[str, Any]]) -> None:
    """"new" where a pair first appears, "grader" where its grader version changed."""
    seen: dict[tuple[str, str, str], str] = {}
    for commit in reversed(commits):
        for row in commit["rows"]:
            pair = (row["eval"], row["config"], row["model"])
            before = seen.get(pair)
            row["marks"] = ["new"] if before is None else \
                ["grader"] if before != row["grader_version"] else []
            seen[pair] = row["grader_version"]
