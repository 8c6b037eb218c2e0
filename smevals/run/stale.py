"""Why a Run is stale: what changed since it was made, told from its recorded inputs.

A Run records the hashes of its task document, its config (with the model) and its runner
program. Against an Eval (as in the working tree, or at a revision) a stale Run is one of:
its task was deleted, its config was deleted, its task was edited, its config was changed,
or its runner program was changed. The first that applies is its reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from smevals.errors import SmevalsError
from smevals.run.plan import REASONS as CHANGES
from smevals.run.plan import Runner, differences, inputs_of, resolve_runner
from smevals.spec.model import Eval
from smevals.store.read import Obj
from smevals.store.records import Inputs, RunBrief

TASK_DELETED = "task deleted"
CONFIG_DELETED = "config deleted"
REASONS = (TASK_DELETED, CONFIG_DELETED, *CHANGES)    # task edited, config/runner changed

Cell = tuple[str, str, str]          # (task, config, model)


def classifier(ev: Eval) -> Callable[[Cell, Obj[RunBrief]], str]:
    """A function giving the reason a Run of `cell` is stale against `ev`."""
    tasks = {t.name: t for t in ev.tasks}
    runners: dict[str, Runner | None] = {}
    wants: dict[Cell, Inputs] = {}

    def runner(config_name: str) -> Runner | None:
        if config_name not in runners:
            try:
                runners[config_name] = resolve_runner(ev.configs[config_name])
            except (SmevalsError, OSError):
                runners[config_name] = None
        return runners[config_name]

    def reason(cell: Cell, run: Obj[RunBrief]) -> str:
        task, config = tasks.get(cell[0]), ev.configs.get(cell[1])
        if task is None:
            return TASK_DELETED
        if config is None:
            return CONFIG_DELETED
        want = wants.get(cell)
        if want is None:
            program = runner(cell[1]) or Runner(None, None, "", "")
            want = wants[cell] = inputs_of(task, config, program, cell[2])
        changed = differences(run.record.get("inputs"), want)
        return changed[0] if changed else CHANGES[-1]     # a record without inputs

    return reason


def count(ev: Eval, stale: Iterable[tuple[Cell, Obj[RunBrief]]]) -> dict[str, int]:
    """Stale Runs by reason, in the order of REASONS (reasons with no Run left out)."""
    why = classifier(ev)
    found = Counter(why(cell, run) for cell, run in stale)
    return {reason: found[reason] for reason in REASONS if found[reason]}


def predicate(ev: Eval) -> Callable[[Obj[RunBrief]], bool]:
    """Whether a Run is stale against `ev`, as `report` decides: its task or config is gone,
    or its recorded inputs differ from a current Run's (only the task and config hashes are
    compared when the config's runner cannot be found here)."""
    tasks = {t.name: t for t in ev.tasks}
    runners: dict[str, Runner | None] = {}
    wants: dict[Cell, dict[str, object] | None] = {}

    def want(cell: Cell) -> dict[str, object] | None:
        task, config = tasks.get(cell[0]), ev.configs.get(cell[1])
        if task is None or config is None:
            return None
        if cell[1] not in runners:
            try:
                runners[cell[1]] = resolve_runner(config)
            except (SmevalsError, OSError):
                runners[cell[1]] = None
        runner = runners[cell[1]]
        inputs = inputs_of(task, config, runner or Runner(None, None, "", ""), cell[2])
        if runner is None:
            return {"task": inputs["task"], "config": inputs["config"]}
        return {"hash": inputs["hash"]}

    def is_stale(run: Obj[RunBrief]) -> bool:
        rec = run.record
        try:
            cell = (str(rec["task"]["name"]), str(rec["config"]["name"]), str(rec["model"]))
        except (KeyError, TypeError):
            return True
        if cell not in wants:
            wants[cell] = want(cell)
        expected, had = wants[cell], rec.get("inputs")
        if expected is None or not isinstance(had, dict):
            return True
        return any(had.get(key) != value for key, value in expected.items())

    return is_stale
