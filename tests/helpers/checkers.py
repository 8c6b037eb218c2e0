"""Table helpers for checker tests: one Case per row, checked by ``verify``."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pytest

from smevals.checkers import CheckInput, CheckResult, run_check
from smevals.files.canonical import dumps, sha256_bytes
from smevals.store.records import Usage
from tests.helpers import Result, grade_records, make_eval

ANY = object()


@dataclass
class Case:
    opts: dict[str, Any]
    output: str = ""
    ok: bool = True
    score: Any = ANY
    notes: str = ""
    task: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] | None = None


def case(
    name: str, ident: str, opts: dict[str, Any], output: str = "", ok: bool = True, **kw: Any
) -> Any:
    return pytest.param(name, Case(opts, output, ok, **kw), id=f"{name}-{ident}")


def run(
    name: str,
    opts: dict[str, Any] | None = None,
    output: str = "",
    task: dict[str, Any] | None = None,
    usage: dict[str, Any] | None = None,
    run_dir: Path | None = None,
    workspace: Path | None = None,
    timeout: float | None = None,
    check_name: str | None = None,
) -> CheckResult:
    inp = CheckInput(
        output=output,
        task=task or {},
        usage=cast(Usage | None, usage),      # as a Run recorded it, or made up
        run_dir=run_dir,
        workspace=workspace,
        timeout=timeout,
        check_name=check_name,
    )
    return run_check(name, opts or {}, inp)


def verify(name: str, c: Case) -> CheckResult:
    result = run(name, c.opts, c.output, c.task, c.usage)
    assert result.ok is c.ok, result.as_dict()
    if c.score is None:
        assert result.score is None, result.as_dict()
    elif c.score is not ANY:
        assert result.score is not None and math.isclose(result.score, c.score, abs_tol=1e-4), (
            result.as_dict()
        )
    assert c.notes in result.notes, result.as_dict()
    if not c.ok:
        assert result.notes, "a failed check always says why"
    return result


def levenshtein_dp(a: str, b: str) -> int:
    """The full dynamic-programming edit distance: the reference the fast one is checked against."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def version_before_issue_18(name: str, doc: dict[str, Any]) -> str:
    """How a grader version was computed when `bleu` gave @caveman/evals' figure."""
    return sha256_bytes(dumps({"spec": {**doc, "name": name}, "programs": {},
                               "catalog": "1"}))[:12]


def version_changed(cli: Callable[..., Result], folder: Path,
                    checks: list[dict[str, Any]]) -> bool:
    """Whether a grader of `checks` grades with another version than before issue 18."""
    doc = {"checks": checks}
    ev = make_eval(folder, tasks={"one": "prompt: hi\n"}, graders={"default": json.dumps(doc)})
    cli("run", str(ev), "-g")
    (record,) = grade_records(ev)
    out: bool = record["grader"]["version"] != version_before_issue_18("default", doc)
    return out
