"""Option handling shared by every checker: aliases, `{task: KEY}`, defaults, types.

`static_problems` serves `smevals validate` (no Task at hand); `prepare` runs at
grade time and raises CheckFailure naming the option on the first problem.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from smevals import caches
from smevals.checkers.base import Checker, CheckFailure
from smevals.evaldef.paths import path_problem
from smevals.schemas import Schema, Violation

Problem = tuple[str, str]

_VALIDATORS: dict[int, tuple[Checker, Schema]] = {}
caches.register(__name__, "_VALIDATORS")


def is_task_ref(value: object) -> bool:
    """`{task: KEY}`: a mapping with exactly the one key `task`."""
    return isinstance(value, Mapping) and len(value) == 1 and "task" in value


def static_problems(checker: Checker, options: dict[str, Any]) -> list[Problem]:
    opts, problems = _rename(checker, options)
    problems += _unknown(checker, opts)
    problems += [p for k, v in opts.items() if is_task_ref(v) for p in _ref_problems(k, v)]
    problems += _group_problems(checker, opts, task=None)
    concrete = {k: v for k, v in opts.items() if not is_task_ref(v)}
    typed = _type_problems(checker, concrete)
    problems += typed
    if not typed:
        problems += _file_problems(checker, concrete)
        if checker.problems is not None:
            problems += checker.problems(concrete)
    return [_as_written(checker, options, p) for p in problems]


def _file_problems(checker: Checker, opts: dict[str, Any]) -> list[Problem]:
    """`file:` names a file inside the workspace or the Run's folder (refused again when the
    checker reads it, for a value taken from the Task)."""
    name = opts.get("file")
    if checker.reads not in ("text", "json") or not isinstance(name, str):
        return []
    why = path_problem(name)
    return [("file", why)] if why else []


def task_needs(checker: Checker, options: dict[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    """What every Task must hold for the check to run: (option as written, the Task keys of
    which one is needed) for each `{task: KEY}` and each required option left to the Task."""
    needs: list[tuple[str, tuple[str, ...]]] = [
        (key, (value["task"],)) for key, value in options.items()
        if is_task_ref(value) and not _ref_problems(key, value)]
    opts, _ = _rename(checker, options)
    for group in checker.groups():
        keys = tuple(k for option in group for k in checker.task_keys.get(option, ()))
        if keys and not any(option in opts for option in group):
            needs.append((group[0], keys))
    return needs


def _as_written(checker: Checker, options: dict[str, Any], problem: Problem) -> Problem:
    """Report a problem under the option's spelling in the grader (e.g. an alias)."""
    path, message = problem
    head, dot, rest = path.partition(".")
    if head in options:
        return problem
    spelled = [k for k, v in checker.aliases.items() if v == head and k in options]
    return (spelled[0] + dot + rest, message) if spelled else problem


def prepare(checker: Checker, options: dict[str, Any], task: Mapping[str, Any]) -> dict[str, Any]:
    """The options a checker runs with: aliases renamed, Task values filled in, typed."""
    opts, problems = _rename(checker, options)
    problems += _unknown(checker, opts)
    _raise_first(problems)
    origin: dict[str, str] = {}
    for key, value in list(opts.items()):
        if is_task_ref(value):
            opts[key] = _from_task(task, value["task"], key)
            origin[key] = value["task"]
    _raise_first(_group_problems(checker, opts, task, origin))
    _raise_first(_type_problems(checker, opts, origin))
    if checker.problems is not None:
        _raise_first(checker.problems(opts))
    return opts


def _raise_first(problems: list[Problem]) -> None:
    if problems:
        path, message = problems[0]
        raise CheckFailure(f"option {path!r}: {message}" if path else message)


def _rename(checker: Checker, options: dict[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    out: dict[str, Any] = {}
    problems: list[Problem] = []
    for key, value in options.items():
        name = checker.aliases.get(key, key)
        if name in out:
            problems.append((key, f"{key!r} and {name!r} name the same option; give one"))
        out[name] = value
    return out, problems


def _unknown(checker: Checker, opts: dict[str, Any]) -> list[Problem]:
    if not checker.strict:
        return []
    known = checker.all_properties()
    listing = ", ".join(sorted(known)) or "none"
    return [
        (str(k), f"unknown option for checker {checker.name!r} (known options: {listing})")
        for k in opts
        if k not in known
    ]


def _ref_problems(key: str, ref: Mapping[str, Any]) -> list[Problem]:
    name = ref["task"]
    if isinstance(name, str) and name.strip():
        return []
    return [(key, "{task: KEY} needs KEY to be a non-empty string")]


def _from_task(task: Mapping[str, Any], name: object, option: str) -> Any:
    for problem in _ref_problems(option, {"task": name}):
        raise CheckFailure(f"option {problem[0]!r}: {problem[1]}")
    if not isinstance(task, Mapping) or not isinstance(name, str) or name not in task:
        raise CheckFailure(f"the Task has no key {name!r} (option {option!r} reads it)")
    return task[name]


def _group_problems(
    checker: Checker,
    opts: dict[str, Any],
    task: Mapping[str, Any] | None,
    origin: dict[str, str] | None = None,
) -> list[Problem]:
    """Exactly one of each required group; at grade time fill absent ones from the Task
    (recording in `origin`, the caller's dict, which option came from which Task key)."""
    origin = {} if origin is None else origin
    problems: list[Problem] = []
    for group in checker.groups():
        present = [o for o in group if o in opts]
        if len(present) > 1:
            problems.append((present[1], f"give only one of {_words(group)}"))
        elif not present and task is not None:
            problems += _fill_from_task(checker, group, opts, task, origin)
        elif not present and not any(o in checker.task_keys for o in group):
            problems.append((group[0], _missing(checker, group)))
    if task is not None:
        _fill_optional(checker, opts, task, origin)
    return problems


def _fill_from_task(
    checker: Checker,
    group: tuple[str, ...],
    opts: dict[str, Any],
    task: Mapping[str, Any],
    origin: dict[str, str],
) -> list[Problem]:
    for option in group:
        for key in checker.task_keys.get(option, ()):
            if isinstance(task, Mapping) and key in task:
                opts[option] = task[key]
                origin[option] = key
                return []
    return [(group[0], _missing(checker, group))]


def _fill_optional(
    checker: Checker, opts: dict[str, Any], task: Mapping[str, Any], origin: dict[str, str]
) -> None:
    grouped = {o for g in checker.groups() for o in g}
    for option, keys in checker.task_keys.items():
        if option in opts or option in grouped or not isinstance(task, Mapping):
            continue
        for key in keys:
            if key in task:
                opts[option], origin[option] = task[key], key
                break


def _missing(checker: Checker, group: tuple[str, ...]) -> str:
    keys = [k for o in group for k in checker.task_keys.get(o, ())]
    what = (
        "missing required option" if len(group) == 1 else f"missing option: one of {_words(group)}"
    )
    if keys:
        what += f" (and the Task has no {' or '.join(repr(k) for k in keys)} key)"
    return what


def _words(names: tuple[str, ...]) -> str:
    return ", ".join(repr(n) for n in names)


def _type_problems(
    checker: Checker, opts: dict[str, Any], origin: dict[str, str] | None = None
) -> list[Problem]:
    validator = _validator(checker)
    if validator.is_valid(opts):
        return []
    origin = origin if origin is not None else {}
    problems = []
    for found in validator.violations(opts):
        err = _precise(found)
        path = ".".join(str(p) for p in err.path)
        message = _describe(err)
        top = str(err.path[0]) if err.path else ""
        if top in origin:
            message += f" (from Task key {origin[top]!r})"
        problems.append((path, message))
    return problems


def _validator(checker: Checker) -> Schema:
    cached = _VALIDATORS.get(id(checker))
    if cached is not None and cached[0] is checker:
        return cached[1]
    validator = Schema({"type": "object", "properties": checker.all_properties()})
    _VALIDATORS[id(checker)] = (checker, validator)
    return validator


def _precise(err: Violation) -> Violation:
    """For anyOf/oneOf, the error inside the value when one branch got further."""
    if err.keyword in ("anyOf", "oneOf") and err.context:
        deepest = max(err.context, key=lambda e: len(e.path))
        if len(deepest.path) > len(err.path):
            return _precise(deepest)
    return err


def _describe(err: Violation) -> str:
    expect = err.schema.get("x-expect")
    if expect:
        return f"expected {expect}, got {short_json(err.instance)}"
    return err.message[:200]


def short_json(value: object, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
