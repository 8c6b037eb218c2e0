"""One Eval at one commit: its config x model figures as `report --rev C` counts them
(`smevals.sides.read`, `smevals.report.summary`), its damage, and what identifies its
grader, runners, configs and Tasks there (compared between commits by `marks.py`).

A Point is plain data (lists, dicts, strings, numbers), so that it can be kept in the cache
(`memo.py`) and a commit read once is never read again."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, TypedDict

from smevals import caches, stats
from smevals.errors import SmevalsError
from smevals.evaldef.model import Eval
from smevals.history.authoring import Authoring, Key
from smevals.history.doc import RowDoc
from smevals.report.rows import OLDER, STALE
from smevals.report.summary import Group
from smevals.run.plan import Runner, digest_of_config, digest_of_task
from smevals.run.stale import Staleness
from smevals.sides.read import NoStore, Side, SideSpec, report_side
from smevals.store.layout import slug

NO_RUNNER = Runner(None, None, "", "")


class Identity(TypedDict):
    """What a config x model's figures at a commit were made with."""

    grader_version: str
    files: dict[str, str]           # what the grader version covers (grade/version.py)
    inputs: dict[str, str]          # "task" (every Task's hash), "config", "runner"
    tasks: list[str]                # the Task names the Eval defines
    runners: list[str]              # the runner versions its Runs record (report.rows.runner_of)


class Point(TypedDict):
    present: bool                   # the Eval exists at this commit
    name: str                       # its name there
    rows: list[RowDoc]              # by config, model; marks and changes still empty
    identities: list[Identity]      # one per row
    damage: int
    notes: list[str]


def load_point(folder: Path, sha: str, spec: SideSpec, tmp: Path, authoring: Authoring,
               key: Key | None = None, present: bool | None = None) -> Point:
    """The Eval in `folder` as committed at `sha`, with its store there (`present` False:
    the commit has no Eval there; `key`: see authoring.py)."""
    if present is False:
        return empty(False, folder.name)
    try:
        opened = authoring.open(folder, sha, spec.store, tmp, key)
    except NoStore:
        return empty(True, folder.name)
    except SmevalsError as exc:
        return {**empty(True, folder.name), "notes": [str(exc)]}
    try:
        side = report_side(opened, spec)
    except SmevalsError as exc:
        return {**empty(True, opened.ev.name), "notes": [str(exc)]}
    return point_of(side, opened.ev)


def empty(present: bool, name: str) -> Point:
    return {"present": present, "name": name, "rows": [], "identities": [], "damage": 0,
            "notes": []}


def point_of(side: Side, ev: Eval) -> Point:
    """The figures of every config x model with counted Runs, and a row without figures
    for each one whose Runs are all left out as stale or graded only by another grader
    version (so that the change that did it is marked where it happened)."""
    report = side.report
    groups: dict[tuple[str, str], Group | None] = {(g.config, g.model): g
                                                    for g in report.groups}
    for left in report.collected.excluded:
        if left.reason in (STALE, OLDER) and left.config in ev.configs:
            groups.setdefault((left.config, left.model), None)
    pairs = sorted(groups)
    damaged = [d["path"] for d in report.damaged]
    per_pair = _damage_by_pair(damaged, pairs)
    staleness = Staleness(ev)
    rows = [row_of(report.name, groups[p], report.version, per_pair.get(p, 0), p)
            for p in pairs]
    identities = [_identity(ev, staleness, p, groups[p], report.version, report.files)
                  for p in pairs]
    return {"present": True, "name": report.name, "rows": rows, "identities": identities,
            "damage": len(damaged), "notes": list(report.notes)}


def row_of(name: str, group: Group | None, version: str, damage: int,
           pair: tuple[str, str]) -> RowDoc:
    """The leaderboard figures of `group` (as `report --format json` gives them); with
    damage, only the counts: the figures are left out, never computed over what is left.
    Without a group (no Run of `pair` counts), 0 Runs and no figures."""
    if group is None:
        return {"eval": name, "config": pair[0], "model": pair[1], "runs": 0, "graded": 0,
                "passed": 0, "failed": 0, "scored": 0, "mean": None, "stderr": None,
                "mean_ci": None, "pass_rate": None, "pass_rate_ci": None,
                "grader_version": version, "damage": damage, "marks": [], "changes": [],
                "split": None}
    low, high = group.wilson
    mean, err = group.mean, group.stderr
    interval = stats.mean_interval(group.scores)        # clipped to [0, 1]
    ci = list(interval) if interval else None
    row: RowDoc = {
        "eval": name, "config": group.config, "model": group.model, "runs": group.n,
        "graded": group.n, "passed": group.passed, "failed": group.failed,
        "scored": len(group.scores), "mean": mean, "stderr": err, "mean_ci": ci,
        "pass_rate": group.pass_rate if group.n else None,
        "pass_rate_ci": [low, high] if group.n else None,
        "grader_version": version, "damage": damage, "marks": [], "changes": [],
        "split": None}
    if damage:
        row.update({"mean": None, "stderr": None, "mean_ci": None, "pass_rate": None,
                    "pass_rate_ci": None})
    return row


def _damage_by_pair(paths: list[str],
                    pairs: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """Damaged objects per config x model, by the folder names they are filed under
    (`runs/<task>/<config>/<model>/<id>`, `grades/<grader>/<task>/<config>/<model>/<id>`).
    An object filed under no listed pair counts against every pair: what it held is
    unknown."""
    by_slug = {(slug(c), slug(m)): (c, m) for c, m in pairs}
    out: dict[tuple[str, str], int] = {}
    for path in paths:
        parts = path.split("/")
        at = 2 if parts[0] == "runs" else 3
        pair = by_slug.get((parts[at], parts[at + 1])) if len(parts) > at + 2 else None
        for key in [pair] if pair else pairs:
            out[key] = out.get(key, 0) + 1
    return out


def _identity(ev: Eval, staleness: Staleness, pair: tuple[str, str], group: Group | None,
              version: str, files: dict[str, str]) -> Identity:
    config = ev.configs.get(pair[0])
    inputs: dict[str, str] = {"task": "", "config": "", "runner": ""}
    if config is not None:
        runner = staleness.runner(pair[0]) or NO_RUNNER
        inputs = {"task": tasks_digest(ev),
                  "config": digest_of_config(config, pair[1]), "runner": runner.digest}
    return {"grader_version": version, "files": dict(files), "inputs": inputs,
            "tasks": sorted(t.name for t in ev.tasks),
            "runners": [name for name, _ in group.runners] if group is not None else []}


_HASHED: dict[int, tuple[Eval, str]] = {}    # by id(): Evals reused across commits
caches.register(__name__, "_HASHED")


def tasks_digest(ev: Eval) -> str:
    """One hash of every Task's name and inputs hash (`run.plan.digest_of_task`, the "task"
    part of a Run's inputs: the Task without its answer keys)."""
    seen = _HASHED.get(id(ev))
    if seen is not None and seen[0] is ev:
        return seen[1]
    digest = hashlib.sha256()
    if ev.configs:                  # an Eval without configs: the digest of no Task
        for task in sorted(ev.tasks, key=lambda t: t.name):
            part = digest_of_task(task)
            digest.update(f"{task.name}\0{part}\0".encode("utf-8", "surrogatepass"))
    if len(_HASHED) > 64:
        _HASHED.clear()
    _HASHED[id(ev)] = (ev, digest.hexdigest())
    return _HASHED[id(ev)][1]


def plain(value: object) -> Any:
    """`value` with tuples made lists (what a Point read back from the cache holds)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value
