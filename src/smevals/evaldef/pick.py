"""Loading Evals strictly, and picking a config, tasks or a grader by name (exit 2 naming
what there is): what every command that reads Evals starts with."""

from __future__ import annotations

from pathlib import Path

from smevals.errors import SmevalsError, SpecError
from smevals.evaldef.discover import find_evals
from smevals.evaldef.load import load_eval
from smevals.evaldef.model import Config, Eval, Grader, Task


def load_evals(paths: list[str] | tuple[str, ...]) -> list[Eval]:
    """Every Eval under `paths`, schema-valid, or a SpecError listing every problem."""
    evals, problems = [], []
    for path in find_evals(list(paths)):
        try:
            evals.append(load_eval(path))
        except SpecError as exc:
            problems.extend(exc.problems)
    if problems:
        raise SpecError(problems)
    return evals


def pick_config(ev: Eval, name: str) -> Config:
    if name not in ev.configs:
        have = ", ".join(sorted(ev.configs)) or "(none)"
        hint = ("; give -c NAME (repeatable), or list the Configs to run without -c under "
                "`configs:` in eval.yaml") if name == "default" and ev.configs else ""
        raise SmevalsError(f"{ev.name}: no config named '{name}' - available configs: "
                           f"{have}{hint}")
    return ev.configs[name]


def pick_grader(ev: Eval, name: str) -> Grader:
    if name not in ev.graders:
        have = ", ".join(sorted(ev.graders)) or "(none)"
        raise SmevalsError(f"{ev.name}: no grader named '{name}' - available graders: {have}")
    return ev.graders[name]


def pick_tasks(ev: Eval, names: tuple[str, ...] | list[str]) -> list[Task]:
    if not ev.tasks:
        raise SmevalsError(f"no tasks found in {Path(ev.path) / 'tasks'}")
    if not names:
        return list(ev.tasks)
    known = {t.name: t for t in ev.tasks}
    missing = [n for n in names if n not in known]
    if missing:
        raise SmevalsError(f"{ev.name}: no such task(s): {', '.join(missing)} - "
                           + _available(sorted(known), missing))
    return [known[n] for n in dict.fromkeys(names)]


SHOWN_TASKS = 20


def _available(names: list[str], missing: list[str]) -> str:
    """Every Task name, or (for an Eval of data-file rows) the first few and the closest."""
    if len(names) <= SHOWN_TASKS:
        return f"available tasks: {', '.join(names)}"
    import difflib

    close = list(dict.fromkeys(c for name in missing[:5]
                               for c in difflib.get_close_matches(name, names, 3)))
    hint = f"; the closest: {', '.join(close)}" if close else ""
    return (f"{len(names)} tasks, the first {SHOWN_TASKS} by name: {', '.join(names[:SHOWN_TASKS])}"
            f"{hint} (smevals run --dry-run lists them all)")
