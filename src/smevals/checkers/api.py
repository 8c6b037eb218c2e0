"""`smevals.check`: run one built-in Check on a string, without a store.

A spec names its checker with `checker` (grader files) or `type` (@caveman/evals,
ai-eval-forge) and carries the options beside it. Reserved keys are not options:
`name` and `timeout` reach the checker as in a Grade; `min` (a number from 0 to
1) is the check's pass mark, as in a Grade: it passes iff its score reaches `min`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from smevals.checkers import (
    RESERVED_KEYS,
    get_checker,
    is_builtin,
    option_problems,
    run_check,
)
from smevals.checkers.base import CheckInput, CheckResult, is_number
from smevals.errors import SmevalsError
from smevals.store.records import Usage

__all__ = ["apply_min", "check", "min_conflicts", "min_verdict", "task_view"]


def check(
    spec: Mapping[str, Any],
    output: str,
    task: Mapping[str, Any] | None = None,
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The result dict of `spec` applied to `output`; SmevalsError for a bad spec."""
    if not isinstance(spec, Mapping):
        raise SmevalsError(f"a check spec must be a mapping, not {type(spec).__name__}")
    name = _checker_name(spec)
    options = {k: v for k, v in spec.items() if k not in RESERVED_KEYS}
    problems = option_problems(name, options)
    if "min" in spec:
        problems += min_conflicts(name, options)
    if problems:
        listing = "; ".join(f"{path}: {msg}" if path else msg for path, msg in problems)
        raise SmevalsError(f"invalid check {name!r}: {listing}")
    _check_inputs(spec, output, task, usage)
    inp = CheckInput(
        output=output,
        task=task_view(task),
        usage=cast(Usage | None, usage),    # a mapping (checked above); its values are not
        timeout=spec.get("timeout"),
        check_name=spec.get("name"),
    )
    return apply_min(run_check(name, options, inp), spec.get("min")).as_dict()


def _checker_name(spec: Mapping[str, Any]) -> str:
    names = [spec[k] for k in ("checker", "type") if k in spec]
    if not names:
        raise SmevalsError("the check spec names no checker (give `checker` or `type`)")
    if not all(isinstance(n, str) and n.strip() for n in names):
        raise SmevalsError("`checker` / `type` must be a non-empty string")
    if len(names) == 2 and names[0] != names[1]:
        raise SmevalsError(f"`checker` ({names[0]!r}) and `type` ({names[1]!r}) disagree")
    try:
        get_checker(names[0])
    except KeyError as exc:
        raise SmevalsError(exc.args[0]) from None
    return str(names[0])


def _check_inputs(spec: Mapping[str, Any], output: object, task: object, usage: object) -> None:
    if not isinstance(output, str):
        raise SmevalsError(f"output must be a string, not {type(output).__name__}")
    for what, value in (("task", task), ("usage", usage)):
        if value is not None and not isinstance(value, Mapping):
            raise SmevalsError(f"{what} must be a mapping, not {type(value).__name__}")
    if "min" in spec and not (is_number(spec["min"]) and 0 <= spec["min"] <= 1):
        raise SmevalsError(f"`min` must be a number from 0 to 1, not {spec['min']!r}")
    timeout = spec.get("timeout")
    if timeout is not None and not (is_number(timeout) and timeout > 0):
        raise SmevalsError(f"`timeout` must be a positive number of seconds, not {timeout!r}")
    if "name" in spec and not isinstance(spec["name"], str):
        raise SmevalsError("`name` must be a string")


def task_view(task: Mapping[str, Any] | None) -> dict[str, Any]:
    """The Task as checkers see it: its keys with its `grading:` mapping merged on top."""
    if task is None:
        return {}
    view = dict(task)
    grading = view.get("grading")
    if isinstance(grading, Mapping):
        view.update(grading)
    return view


PASS_MARKS = ("threshold", "min_score", "file_threshold", "line_threshold")


def min_conflicts(name: str, options: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A built-in Check with `min` that also sets its checker's own pass mark: (option,
    message) pairs, for `smevals validate` (`min` would make that option meaningless)."""
    found = [key for key in PASS_MARKS if key in options]
    if not found or not is_builtin(name):
        return []
    return [("min", f"`min` is this Check's pass mark and replaces its `{found[0]}`: "
                    f"keep one of them")]


def min_verdict(ok: bool, score: float | None, notes: str, minimum: float
                ) -> tuple[bool, str]:
    """`min` is a Check's pass mark, as in ai-eval-forge: the Check passes iff it produced a
    score and the score reaches `min`, whatever its checker decided. (ok, notes)."""
    if score is None:
        return False, notes if not ok else f"the check sets min {minimum:g} but produced no score"
    if ok and score >= minimum:
        return True, notes
    first = notes.strip().splitlines()[0] if notes.strip() else ""
    if score >= minimum:
        return True, f"score {score:g} reaches the check's min {minimum:g}" + (
            f"; without min: {first}" if first else "")
    return False, f"score {score:g} is below the check's min {minimum:g}" + (
        f"; {first}" if first and not ok else "")


def apply_min(result: CheckResult, minimum: float | None) -> CheckResult:
    """The Check's verdict under its `min` (see `min_verdict`); a Check that got no verdict
    at all (an error) stays an error."""
    if minimum is None or result.error:
        return result
    result.ok, result.notes = min_verdict(result.ok, result.score, result.notes, minimum)
    return result
