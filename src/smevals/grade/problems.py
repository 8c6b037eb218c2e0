"""The checks across files: a config's runner, a grader's Checks against the checkers and
the Tasks they read. `validate` reports them all; `run` and `grade` refuse to start on
any (`checked_grader`)."""

from __future__ import annotations

import difflib
import functools

from smevals.errors import Problem, SpecError
from smevals.evaldef.load import display_path, where
from smevals.evaldef.model import Check, Config, Eval, Grader, Task
from smevals.evaldef.pick import pick_grader
from smevals.evaldef.programs import ProgramError, resolve_program
from smevals.evaldef.sandbox import grade_sandbox_problems
from smevals.run.prompts import template_problems


def cross_file_problems(ev: Eval) -> list[Problem]:
    problems: list[Problem] = []
    for config in ev.configs.values():
        problems.extend(config_problems(config))
        problems.extend(template_problems(config, ev.tasks))
    for grader in ev.graders.values():
        problems.extend(grader_problems(grader, ev.tasks))
    problems.extend(workspace_problems(ev.tasks))
    return problems


def workspace_problems(tasks: tuple[Task, ...] | list[Task]) -> list[Problem]:
    """Each Task's `workspace:` exists inside the Eval, holds regular files and folders only
    and is within the limits (evaldef/workspace.py)."""
    from smevals.evaldef.workspace import spec_problems

    return [p for task in tasks for p in spec_problems(task)]


def config_problems(config: Config) -> list[Problem]:
    """The runner must exist and be executable, or be a built-in with valid settings."""
    from smevals.runners import builtin_name
    from smevals.runners import config_problems as builtin_problems

    shown = display_path(config.path)
    line, col = config.vlocs.get(("runner",), (1, 1))
    name = builtin_name(config.runner)
    if name is not None:
        return [Problem(shown, *_config_pos(config, key, (line, col)), msg, key)
                for key, msg in builtin_problems(name, config.doc)]
    try:
        resolve_program(config.runner, config.path.parent)
    except ProgramError as exc:
        return [Problem(shown, line, col, f"runner {exc}", "runner")]
    return []


def _config_pos(config: Config, key: str, default: tuple[int, int]) -> tuple[int, int]:
    """Where the config key `key` (`backoff.cap` for a key inside a mapping) is written."""
    if key == "runner":
        return config.vlocs.get(("runner",), default)
    parts = tuple(key.split("."))
    for cut in range(len(parts), 0, -1):
        if parts[:cut] in config.locs:
            return config.locs[parts[:cut]]
    return default


def grader_problems(grader: Grader, tasks: tuple[Task, ...] | list[Task]) -> list[Problem]:
    """Every Check's options and program, and the Task keys the Checks read from `tasks`."""
    out = []
    for check in grader.checks:
        found = check_problems(grader, check)
        out.extend(found or task_key_problems(grader, check, tasks))
        out.extend(depends_problems(grader, check))
    return out


def depends_problems(grader: Grader, check: Check) -> list[Problem]:
    """Each `depends:` glob must stay inside the Eval folder and match at least one file."""
    from smevals.grade.deps import declared, eval_dir, glob_problem

    listed = isinstance(check.spec.get("depends"), list)
    root = eval_dir(grader)
    out = []
    for index, pattern in enumerate(check.depends):
        where = ("checks", check.index, "depends") + ((index,) if listed else ())
        why = glob_problem(pattern, grader.path.parent, root)
        if why is None and not declared(grader.path.parent, root, pattern):
            why = (f"matches no file (globs are relative to the grader's folder, "
                   f"{display_path(grader.path.parent)}/)")
        if why is not None:
            pos = grader.vlocs.get(where, grader.locs.get(where[:3], (1, 1)))
            field = f"checks[{check.index}].depends" + (f"[{index}]" if listed else "")
            out.append(Problem(display_path(grader.path), *pos, f"'{pattern}' {why}", field))
    return out


def check_problems(grader: Grader, check: Check) -> list[Problem]:
    """A built-in checker's options must be valid; a checker program must exist."""
    from smevals import checkers

    shown = display_path(grader.path)
    where = ("checks", check.index)
    line, col = grader.vlocs.get(where + ("checker",), grader.locs.get(where, (1, 1)))
    if checkers.is_builtin(check.checker):
        from smevals.checkers.api import min_conflicts

        found = checkers.option_problems(check.checker, check.options)
        if check.min_score is not None:
            found += min_conflicts(check.checker, check.options)
        found += _grader_file_problems(grader, check, found)
        return [Problem(shown, *grader.locs.get(where + (opt.split(".")[0],),
                                                grader.locs.get(where, (line, col))),
                        msg, f"checks[{check.index}].{opt}")
                for opt, msg in found]
    try:
        resolve_program(check.checker, grader.path.parent)
    except ProgramError as exc:
        return [Problem(shown, line, col, _unknown_checker(check.checker, exc),
                        f"checks[{check.index}].checker")]
    return []


def _grader_file_problems(grader: Grader, check: Check, found: list[tuple[str, str]]
                          ) -> list[tuple[str, str]]:
    """A file option (an SQL Check's `database`) that names no file beside the grader."""
    from smevals import checkers

    option = checkers.GRADER_FILES.get(checkers.canonical_name(check.checker))
    name = check.options.get(option) if option else None
    if not option or not isinstance(name, str) or not name or "\0" in name or any(
            path.split(".")[0] == option for path, _ in found):
        return []
    if (grader.path.parent / name).is_file():
        return []
    return [(option, f"no such file: {name} (relative to the grader's folder)")]


def _unknown_checker(name: str, exc: ProgramError) -> str:
    from smevals import checkers

    if "/" in name or "\\" in name:
        return f"checker program {exc}"
    close = difflib.get_close_matches(checkers.canonical_name(name), checkers.checker_names(), 1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return (f"unknown checker '{name}': not a built-in checker{hint}, and no program of that "
            f"name next to the grader or on PATH")


def task_key_problems(grader: Grader, check: Check, tasks: tuple[Task, ...] | list[Task]
                      ) -> list[Problem]:
    """A Task key the check reads (`{task: KEY}`, or a required option a checker takes from
    the Task) that some Task has neither under `grading:` nor at the top level: the check
    would fail on every Run of that Task."""
    from smevals import checkers

    if not checkers.is_builtin(check.checker):
        return []
    shown = display_path(grader.path)
    where = ("checks", check.index)
    out = []
    only = check.spec.get("if_task_has")
    if isinstance(only, str):        # the Check applies only to the Tasks with that key
        tasks = [t for t in tasks if only in t.grading or only in t.doc]
    for option, keys in checkers.task_needs(check.checker, check.options):
        lacking = [t for t in tasks if not any(k in t.grading or k in t.doc for k in keys)]
        if not lacking:
            continue
        if option in check.options:
            pos = grader.vlocs.get(where + (option,), grader.locs.get(where, (1, 1)))
            what = f"{{task: {keys[0]}}} reads the Task key '{keys[0]}'"
        else:
            pos = grader.locs.get(where, (1, 1))
            names = " or ".join(f"'{k}'" for k in keys)
            what = (f"checker '{check.checker}' needs the option '{option}' or the Task key "
                    f"{names}")
        out.append(Problem(shown, *pos, f"{what}, {_lacking(lacking, keys)}",
                           f"checks[{check.index}].{option}"))
    return out


def _lacking(tasks: list[Task], keys: tuple[str, ...]) -> str:
    if len(tasks) > 1:
        names = ", ".join(t.name for t in tasks[:3])
        more = f" and {len(tasks) - 3} more" if len(tasks) > 3 else ""
        return f"which {len(tasks)} Tasks lack: {names}{more}"
    task = tasks[0]
    have = [str(k) for k in (*task.grading, *task.doc)]
    close = difflib.get_close_matches(keys[0], have, 1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    return f"which Task '{task.name}' ({where(task)}) lacks{hint}"


def task_key_warnings(task: Task) -> list[Problem]:
    """A top-level Task key that looks like a misspelling of a known one (`gradng:`). Any key
    is allowed (runners see it), so this is a warning."""
    out = []
    for key in task.doc:
        close = _misspelt(key) if isinstance(key, str) else None
        if close:
            line, col = task.pos(key)
            out.append(Problem(display_path(task.path), line, col,
                               f"unknown Task key '{key}' - did you mean '{close}'? (as "
                               "written it is an ordinary key, given to runners)", key,
                               warning=True))
    return out


@functools.lru_cache(maxsize=4096)
def _misspelt(key: str) -> str | None:
    """The known Task key `key` looks like a misspelling of (None for a known key): asked
    once per key, not once per Task, for Evals of thousands of rows."""
    from smevals.schemas import load_schema

    known = list(load_schema("task").get("properties", {}))
    if key in known:
        return None
    close = difflib.get_close_matches(key.lower(), known, 1, cutoff=0.8)
    return close[0] if close else None


def checked_grader(ev: Eval, name: str, tasks: tuple[str, ...] = ()) -> Grader:
    """The grader `name`, with every Check's options and programs valid, every Task key
    it reads present in the Tasks (those named, else all), and every sandbox its Checks
    ask for available here (smevals.evaldef.sandbox); else exit 2."""
    grader = pick_grader(ev, name)
    chosen = [t for t in ev.tasks if not tasks or t.name in tasks]
    problems = grader_problems(grader, chosen) or grade_sandbox_problems(grader, chosen)
    if problems:
        raise SpecError(problems)
    return grader
