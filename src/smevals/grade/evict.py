"""What `smevals gc` removes on request beyond staging leftovers: judge cache entries
(`--judge-cache`, narrowed by age, grader and judge model) and errored Grades a later
verdict replaced (`--errored`, and with `--superseded`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from smevals.errors import SmevalsError
from smevals.store.read import Store

Target = tuple[Path, Path, str]         # (store root, what to remove, why)

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"(\d+)([smhdw])")


def parse_duration(text: str) -> timedelta:
    """`90d`, `12h`, `1d12h`, `30m`, `45s`, `2w`: whole numbers, each with its unit."""
    spec = text.strip().lower()
    parts = _DURATION.findall(spec)
    if not spec or "".join(n + u for n, u in parts) != spec:
        raise SmevalsError(f"--older-than: '{text}' is not a duration (a whole number and a "
                           "unit, s m h d or w, e.g. 90d, 12h or 1d12h)")
    return timedelta(seconds=sum(int(n) * _UNITS[u] for n, u in parts))


@dataclass(frozen=True)
class JudgeEviction:
    """Which judge cache entries `gc --judge-cache` removes: those matching every filter."""

    older_than: timedelta | None = None     # stored longer ago than this
    grader: str | None = None               # asked by a Grade of this grader (its artifacts)
    model: str | None = None                # of this judge model


def judge_targets(root: Path, spec: JudgeEviction, now: datetime | None = None) -> list[Target]:
    """The sound judge cache entries of the store `root` that `spec` selects (damaged ones
    are left to `verify`)."""
    from smevals.store import judgecache

    cutoff = None if spec.older_than is None else (now or datetime.now(UTC)) - spec.older_than
    keys = None if spec.grader is None else _keys_asked(root, spec.grader)
    out = []
    for _rel, path in judgecache.entries(root):
        if path is None or (keys is not None and path.name.split(".", 1)[0] not in keys):
            continue
        _data, record, problems = judgecache.check_entry(path)
        if record is None or problems:
            continue
        model = str(record["request"].get("model"))
        created = judgecache.created_at(record)
        if spec.model is not None and model != spec.model:
            continue
        if cutoff is not None and created is not None and created >= cutoff:
            continue
        when = created.strftime("%Y-%m-%d %H:%M:%S UTC") if created else "at an unknown time"
        out.append((root, path, f"judge cache entry (judge model {model}, stored {when})"))
    return out


def _keys_asked(root: Path, grader: str) -> set[str]:
    """The cache keys of the judge calls the Grades of `grader` in `root` made or were
    answered with (from each Grade's judge-*.json files)."""
    from smevals.files.canonical import loads
    from smevals.files.gitcat import SourceError

    st = Store(root)
    keys: set[str] = set()
    for grade in st.grades():
        if grade.record.get("grader", {}).get("name") != grader:
            continue
        for entry in grade.record.get("files") or []:
            name = str(entry.get("path", "")) if isinstance(entry, dict) else ""
            if not (name.startswith("judge-") and name.endswith(".json")) or "/" in name:
                continue
            try:
                doc: Any = loads(st.read_file(grade, name))
            except (OSError, ValueError, SourceError):
                continue
            calls = doc.get("calls") if isinstance(doc, dict) else None
            keys.update(str(c["cache_key"]) for c in calls or []
                        if isinstance(c, dict) and "cache_key" in c)
    return keys


def errored_targets(root: Path) -> list[Target]:
    """Errored Grades of `root` that a later verdict of the same grader version replaced."""
    from smevals.grade.select import superseded_errors

    st = Store(root)
    grades = st.grades()
    retried = superseded_errors(grades)
    return [(root, st.path_of(g), "errored Grade superseded by a verdict (grader "
             f"{g.record['grader'].get('name')} version "
             f"{str(g.record['grader'].get('version'))[:12]})")
            for g in grades if g.id in retried]
