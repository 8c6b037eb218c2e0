"""`smevals.check`: run one built-in Check on a string, without a store.

A spec names its checker with `checker` (grader files) or `type` (@caveman/evals,
ai-eval-forge) and carries the options beside it. Reserved keys are not options:
`name` and `timeout` reach the checker as in a Grade; `min` (a number from 0 to
1) fails a passing check whose score is below it or absent, as the grader does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from smevals.checkers import RESERVED_KEYS, get_checker, option_problems, run_check
from smevals.checkers.base import CheckInput, CheckResult, is_number
from smevals.errors import SmevalsError

__all__ = ["apply_min", "check", "task_view"]


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
    if problems:
        listing = "; ".join(f"{path}: {msg}" if path else msg for path, msg in problems)
        raise SmevalsError(f"invalid check {name!r}: {listing}")
    _check_inputs(spec, output, task, usage)
    inp = CheckInput(
        output=output,
        task=task_view(task),
        usage=usage,
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


def apply_min(result: CheckResult, minimum: Any) -> CheckResult:
    """`min` only tightens, as in a Grade: a passing check fails below it or unscored."""
    if minimum is None or not result.ok:
        return result
    if result.score is None:
        result.ok = False
        result.notes = f"the check sets min {minimum} but produced no score"
    elif result.score < minimum:
        result.ok = False
        result.notes = f"score {result.score:g} is below the check's min {minimum:g}"
    return result
