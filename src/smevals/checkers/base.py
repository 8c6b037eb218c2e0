"""The records every built-in checker shares: its input, its result and its declaration.

Kept free of heavy imports: `smevals.checkers` imports this module at start-up.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, Protocol, TypeGuard

from smevals.store.records import Usage

__all__ = [
    "CheckError",
    "CheckFailure",
    "CheckInput",
    "CheckResult",
    "Checker",
    "JudgeAccess",
    "binary",
    "fail",
    "normalize_tag",
]


class JudgeAccess(Protocol):
    """What a grade hands the judge checkers beside the output: the grader's judge block,
    the environment, the Run's model... `smevals.judges.engine.JudgeContext` implements it
    (the judges sit above this package); built-in checkers of this package never read it."""

    @property
    def environ(self) -> Mapping[str, str]: ...
    @property
    def grader_judge(self) -> Mapping[str, Any] | None: ...
    @property
    def grader_dir(self) -> Path | None: ...
    @property
    def run_model(self) -> str: ...
    @property
    def index(self) -> int: ...                 # the Check's place in the grader
    @property
    def find_output(self) -> Callable[[str, str | None], str | None] | None: ...


@dataclass(frozen=True)
class CheckInput:
    """What a checker may look at. Checkers never write outside `workspace`."""

    output: str
    task: Mapping[str, Any]
    usage: Usage | None                 # the Run's, as recorded (store/records.py)
    run_dir: Path | None = None
    workspace: Path | None = None
    timeout: float | None = None
    check_name: str | None = None
    judge: JudgeAccess | None = None     # for the judge checkers
    grader_dir: Path | None = None   # the grader's folder: where `database:` paths start
    # A Run of a Task with starting files: its final tree (the starting files, minus those
    # deleted, with the Run's files on top), built on the first call in a private folder
    # shared by the Grade's Checks (read it, never write it); ValueError, naming why, when it
    # cannot be rebuilt (the starting files changed since the Run)
    run_workspace: Callable[[], Path] | None = None
    # The agent's files in that tree, by path: "added", or "changed" (a starting file it
    # changed); None when not known (then every file of the tree counts as the agent's)
    agent_files: Callable[[], Mapping[str, str]] | None = None


@dataclass
class CheckResult:
    """The verdict of one Check; `as_dict` is what a Grade records."""

    ok: bool
    score: float | None = None
    notes: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float | bool] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    error: bool = False          # no verdict could be had (a judge error): not a fail

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": bool(self.ok)}
        if self.error:
            out["error"] = True
        if self.score is not None:
            out["score"] = float(self.score)
        for key in ("notes", "details", "metrics", "tags"):
            value = getattr(self, key)
            if value:
                out[key] = value
        return out


class CheckFailure(Exception):
    """Raised inside a checker to fail the Check with `reason` (fail closed).

    `score` stays None for a problem with the Check itself (bad option, missing
    file or Task key); a checker sets 0.0 when it judged the output and found it wanting.
    """

    def __init__(self, reason: str, score: float | None = None, **details: object):
        super().__init__(reason)
        self.reason = reason
        self.score = score
        self.details = details


class CheckError(Exception):
    """Raised inside a checker when no verdict could be had (the judge was unreachable or
    answered with something that is not a verdict): the Check's outcome is `error`, which
    is neither a pass nor a fail, and the next `smevals grade` tries it again."""

    def __init__(self, reason: str, details: dict[str, Any] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.details = details or {}


def fail(reason: str, score: float | None = None, **details: object) -> NoReturn:
    raise CheckFailure(reason, score, **details)


def binary(ok: bool, notes: str = "", **details: object) -> CheckResult:
    """A pass/fail verdict scored 1.0 or 0.0; notes and details are kept on failure."""
    if ok:
        return CheckResult(ok=True, score=1.0)
    return CheckResult(ok=False, score=0.0, notes=notes, details=details)


def ratio_result(score: float, threshold: float, notes: str, **details: object) -> CheckResult:
    """A partial-credit verdict: ok iff `score >= threshold` (unrounded).

    Notes are kept on failure; details whose value is empty are dropped.
    """
    ok = score >= threshold
    kept = {k: v for k, v in details.items() if v not in (None, [], {}, "")}
    return CheckResult(ok=ok, score=score, notes="" if ok else notes, details=kept)


_TAG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def normalize_tag(tag: object) -> str:
    """Lower snake_case, as the original smevals normalises checker tags."""
    spaced = "".join(c if c in _TAG_CHARS else " " for c in str(tag).lower())
    return "_".join(spaced.split())


def is_number(value: object) -> TypeGuard[int | float]:
    """A real, finite JSON number (booleans are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value)


CheckFn = Callable[[dict[str, Any], CheckInput], CheckResult]
ProblemFn = Callable[[dict[str, Any]], list[tuple[str, str]]]


@dataclass(frozen=True)
class Checker:
    """The declaration of one checker.

    properties: JSON Schema of each option (type checks); `required` lists options
    that must be present when the check runs, a tuple standing for "exactly one of";
    `task_keys` maps an option to the Task keys read, in order, when it is absent;
    `aliases` maps another tool's spelling of an option to ours; `reads` is "text"
    (the `file:` option applies), "json" (`file:` and `extract: json`), "workspace" (the
    Run's final tree, `CheckInput.run_workspace`) or "none";
    `problems` adds static checks for `smevals validate` (e.g. a regex compiles);
    `strict` False accepts options that `properties` does not name (plugins).
    """

    name: str
    fn: CheckFn
    summary: str
    properties: Mapping[str, Any] = field(default_factory=dict)
    required: tuple[str | tuple[str, ...], ...] = ()
    task_keys: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    aliases: Mapping[str, str] = field(default_factory=dict)
    reads: str = "text"
    problems: ProblemFn | None = None
    strict: bool = True

    def all_properties(self) -> dict[str, Any]:
        props = dict(self.properties)
        if self.reads in ("text", "json"):
            props.setdefault("file", FILE_OPTION)
        if self.reads == "json":
            props.setdefault("extract", EXTRACT_OPTION)
        return props

    def groups(self) -> list[tuple[str, ...]]:
        return [g if isinstance(g, tuple) else (g,) for g in self.required]

    def json_schema(self) -> dict[str, Any]:
        """The full options schema (for docs and tools); validation adds Task lookups."""
        schema: dict[str, Any] = {
            "type": "object",
            "properties": self.all_properties(),
            "additionalProperties": False,
        }
        need = [g[0] for g in self.groups() if len(g) == 1 and g[0] not in self.task_keys]
        if need:
            schema["required"] = need
        return schema


FILE_OPTION = {
    "type": "string",
    "minLength": 1,
    "x-expect": "a relative path to a workspace file or Run artifact",
}
EXTRACT_OPTION = {"enum": ["json"], "x-expect": "'json'"}


def checker(
    table: dict[str, Checker], name: str, summary: str, **kw: Any
) -> Callable[[CheckFn], CheckFn]:
    """Decorator: declare `fn` as the checker `name` in a family's `table`."""

    def register(fn: CheckFn) -> CheckFn:
        table[name] = Checker(name=name, fn=fn, summary=summary, **kw)
        return fn

    return register


# JSON Schema fragments for option declarations. "x-expect" words the type for messages.
STRING = {"type": "string", "x-expect": "a string"}
NONEMPTY = {"type": "string", "minLength": 1, "x-expect": "a non-empty string"}
BOOL = {"type": "boolean", "x-expect": "true or false"}
UNIT = {"type": "number", "minimum": 0, "maximum": 1, "x-expect": "a number from 0 to 1"}
CEILING = {"type": "number", "minimum": 0, "x-expect": "a non-negative number"}
ANY: dict[str, Any] = {}


def str_list(blank_ok: bool = False) -> dict[str, Any]:
    """A non-empty list of strings (non-blank unless `blank_ok`)."""
    item = (
        STRING
        if blank_ok
        else {"type": "string", "pattern": r"\S", "x-expect": "a non-blank string"}
    )
    words = "strings" if blank_ok else "non-blank strings"
    return {
        "type": "array",
        "minItems": 1,
        "items": item,
        "x-expect": f"a non-empty list of {words}",
    }


def one_of_words(*values: str) -> dict[str, Any]:
    return {"enum": list(values), "x-expect": "one of " + ", ".join(repr(v) for v in values)}


def sanitize(result: CheckResult) -> CheckResult:
    """Fail closed on a malformed result; normalise tags as the original smevals does."""
    score = result.score
    if score is not None and not (is_number(score) and 0 <= score <= 1):
        return CheckResult(ok=False, notes=f"checker gave an invalid score: {score!r}"[:200])
    metrics = {k: v for k, v in result.metrics.items() if isinstance(v, bool) or is_number(v)}
    tags = sorted({t for t in (normalize_tag(x) for x in result.tags) if t})
    return CheckResult(
        ok=bool(result.ok),
        score=None if score is None else float(score),
        notes=str(result.notes or ""),
        details=dict(result.details),
        metrics=metrics,
        tags=tags,
        error=bool(result.error) and not result.ok,
    )
