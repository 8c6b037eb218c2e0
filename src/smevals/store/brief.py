"""The brief view of a record: only the fields that reports, diffs and `run -n` read.

A full Grade carries every Check with its details, a full Run the whole task document and
config; decoding 100,000 of them from the index cache takes seconds. The brief view keeps
the same shape (so code reading it cannot tell, as long as it reads only these fields):

- Run: model, status, sample, started, duration_seconds, failure, truncated; `task` and
  `config` reduced to their `name`; `inputs` to hash, task, config, runner and workspace
  (every part `run --dry-run` compares to tell why a Run is stale); `provenance` to
  `runner` (the harness's or the agent loop's version, which `diff` and `log` compare).
- Grade: grading_hash, graded, outcome, score, tags, metrics, judge, tampering; `run` reduced
  to rel and task; `grader` to name and version; `checks` to every Check's name, checker,
  ok, skipped, error and score, and the notes of the failed ones (per-Check figures and the
  reason of a failure need no more).

A field that is not a mapping where one is expected is kept as it is, so malformed records
look the same in both views.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

VERSION = 7        # bump when the fields change: cached brief records are then read again
RUN_KEYS = ("model", "status", "sample", "started", "duration_seconds", "failure", "truncated")
RUN_PARTS = (("task", ("name",)), ("config", ("name",)),
             ("inputs", ("hash", "task", "config", "runner", "workspace")),
             ("provenance", ("runner",)))
GRADE_KEYS = ("grading_hash", "graded", "outcome", "score", "tags", "metrics", "judge",
              "tampering")
GRADE_PARTS = (("run", ("rel", "task")), ("grader", ("name", "version")))
CHECK_KEYS = ("name", "checker", "ok", "skipped", "error", "score")
FAILED_KEYS = (*CHECK_KEYS, "notes")


def brief(kind: str, record: dict[str, Any],
          memo: dict[str, str] | None = None) -> dict[str, Any]:
    """The brief view of a parsed `kind` record (a new dict; the record is not changed
    except that, with `memo`, its strings are shared as by `share_strings`)."""
    keys, parts = (RUN_KEYS, RUN_PARTS) if kind == "run" else (GRADE_KEYS, GRADE_PARTS)
    take = _taker(memo)
    out = {key: take(record[key]) for key in keys if key in record}
    for key, inner in parts:
        if key in record:
            out[key] = _part(record[key], inner, take)
    if kind == "grade" and "checks" in record:
        out["checks"] = _checks(record["checks"], take)
    return out


def _taker(memo: dict[str, str] | None) -> Callable[[Any], Any]:
    if memo is None:
        return lambda value: value

    def take(value: Any) -> Any:
        kind = value.__class__
        if kind is str:
            return memo.setdefault(value, value)
        if kind is dict or kind is list:
            return share_strings(value, memo)
        return value

    return take


def _part(value: object, keys: tuple[str, ...], take: Callable[[Any], Any]) -> Any:
    if value.__class__ is not dict:
        return take(value)
    return {key: take(value[key]) for key in keys if key in value}


def _checks(checks: object, take: Callable[[Any], Any]) -> Any:
    if checks.__class__ is not list:
        return take(checks)
    return [_part(c, FAILED_KEYS if c.__class__ is not dict or c.get("ok") is False
                  else CHECK_KEYS, take) for c in checks]


def share_strings(value: object, memo: dict[str, str]) -> Any:
    """Make equal strings inside freshly parsed records one object (in place). Strings are
    immutable, so nothing can tell, except marshal: it then stores each string once, and
    the cache decodes about a quarter faster."""
    if type(value) is dict:
        for key, item in value.items():
            kind = type(item)
            if kind is str:
                value[key] = memo.setdefault(item, item)
            elif kind is dict or kind is list:
                share_strings(item, memo)
    elif type(value) is list:
        for i, item in enumerate(value):
            kind = type(item)
            if kind is str:
                value[i] = memo.setdefault(item, item)
            elif kind is dict or kind is list:
                share_strings(item, memo)
    return value


