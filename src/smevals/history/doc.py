"""The one shape of a history (`smevals log --format json`, the site's History page).

Documented in docs/diff.md ("History"); keys are never renamed (a consumer reads them)."""

from __future__ import annotations

from typing import Any, TypedDict

FORMAT = 1


class RangeDoc(TypedDict):
    n: int | None                   # -n: at most this many commits listed
    since: str | None               # --since: only commits after this revision
    first_parent: bool


class EvalRef(TypedDict):
    eval: str                       # the Eval's name (as its newest listed commit has it)
    path: str                       # its folder, as found


class RowDoc(TypedDict):
    """One config x model of one Eval at one commit: the figures of `report --rev C`'s
    leaderboard entry, with what changed since the previous listed commit that had it."""

    eval: str
    config: str
    model: str
    runs: int                       # the Runs counted (report's leaderboard `runs`)
    graded: int                     # the same Runs: each counted Run has its Grade
    passed: int
    failed: int
    scored: int                     # of them, Grades with a score
    mean: float | None              # None: no score, or damage (figures left out)
    stderr: float | None
    mean_ci: list[float] | None     # mean +- 1.96 stderr
    pass_rate: float | None
    pass_rate_ci: list[float] | None    # Wilson 95%
    grader_version: str
    damage: int                     # damaged objects of this config x model (left out)
    marks: list[str]                # MARKS: what changed since this pair's previous commit
    changes: list[str]              # the same, said as `diff` says it
    split: dict[str, Any] | None    # where the grader version changed: diff's `split` of
                                    # the pair's change (the grader's part, the evidence's)


class CommitDoc(TypedDict):
    sha: str
    short: str
    subject: str
    date: str                       # author date, ISO-8601 UTC
    author: str
    parents: list[str]
    evals: list[str]                # the Evals that changed here (their rows follow)
    damage: int                     # damaged objects in the Evals' stores at this commit
    rows: list[RowDoc]              # by Eval (in HistoryDoc `evals` order), config, model
    notes: list[str]                # e.g. an Eval invalid at this commit
    other_files: list[str]          # the files of a commit that changed no figure, no mark
                                    # and no result of an Eval (a README): its rows are
                                    # not repeated (history/quiet.py)


class HistoryDoc(TypedDict):
    format: int
    generated: str
    range: RangeDoc
    commits_read: int               # commits in the range that this clone holds
    shallow: bool                   # a shallow clone: history before its boundary is absent
    evals: list[EvalRef]
    commits: list[CommitDoc]        # newest first


NEW = "new"                 # the pair's first listed commit
GRADER = "grader"           # the grader version changed
RUNNER = "runner"           # the config's runner program changed
TASKS = "tasks"             # Tasks were added, deleted or edited
CONFIG = "config"           # the config (its YAML, with the model) changed
MARKS = (NEW, GRADER, RUNNER, TASKS, CONFIG)
