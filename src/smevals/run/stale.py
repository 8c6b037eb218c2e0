"""Why a Run is stale: what changed since it was made, told from its recorded inputs.

A Run records the hashes of its task document, its config (with the model) and its runner
program. Against an Eval (as in the working tree, or at a revision) a stale Run is one of:
its task was deleted, its config was deleted, its task was edited, its config was changed,
its runner program was changed, or its starting files (`workspace:`) were changed. The
first that applies is its reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from smevals.errors import SmevalsError
from smevals.evaldef.model import Eval
from smevals.run.plan import REASONS as CHANGES
from smevals.run.plan import (
    Runner,
    differences,
    digest_of_config,
    digest_of_task,
    inputs_of,
    resolve_runner,
    workspace_digest,
)
from smevals.store.read import Obj
from smevals.store.records import Inputs, RunBrief

TASK_DELETED = "task deleted"
CONFIG_DELETED = "config deleted"
REASONS = (TASK_DELETED, CONFIG_DELETED, *CHANGES)    # task edited, config/runner changed

Cell = tuple[str, str, str]          # (task, config, model)
Want = tuple[tuple[str, str | None], ...]   # (inputs key, value) pairs a current Run has


class Staleness:
    """What a current Run of each cell has as inputs against one Eval (as in the working tree,
    or at a revision), each runner resolved once: the one place that tells a stale Run
    (`report`, `diff`, `grade` and the site ask it)."""

    def __init__(self, ev: Eval):
        self.ev = ev
        self.tasks = {t.name: t for t in ev.tasks}
        self.runners: dict[str, Runner | None] = {}
        self.wants: dict[Cell, Want | None] = {}
        self.inputs: dict[Cell, Inputs] = {}
        self.workspace_digests: dict[str, str | None] = {}    # of each Task's starting files
        self.task_digests: dict[str, str] = {}
        self.config_digests: dict[tuple[str, str], str] = {}     # by (config, model)

    def runner(self, config_name: str) -> Runner | None:
        """The config's runner, or None when it cannot be found here."""
        if config_name not in self.runners:
            try:
                self.runners[config_name] = resolve_runner(self.ev.configs[config_name])
            except (SmevalsError, OSError):
                self.runners[config_name] = None
        return self.runners[config_name]

    def _inputs(self, cell: Cell) -> Inputs:
        if cell not in self.inputs:
            program = self.runner(cell[1]) or Runner(None, None, "", "")
            task = self.tasks[cell[0]]
            if task.name not in self.workspace_digests:
                self.workspace_digests[task.name] = workspace_digest(task)
            if task.name not in self.task_digests:
                self.task_digests[task.name] = digest_of_task(task)
            config, pair = self.ev.configs[cell[1]], (cell[1], cell[2])
            if pair not in self.config_digests:
                self.config_digests[pair] = digest_of_config(config, cell[2])
            self.inputs[cell] = inputs_of(task, config, program, cell[2],
                                          self.config_digests[pair],
                                          self.workspace_digests[task.name],
                                          self.task_digests[task.name])
        return self.inputs[cell]

    def expected(self, cell: Cell) -> Want | None:
        """What a current Run of `cell` has as inputs; None when the task or config no
        longer exists (its Runs are all stale). When the config's runner cannot be found
        here, only the task and config hashes are compared."""
        if cell not in self.wants:
            self.wants[cell] = self._want(cell)
        return self.wants[cell]

    def _want(self, cell: Cell) -> Want | None:
        if cell[0] not in self.tasks or cell[1] not in self.ev.configs:
            return None
        parts = self._inputs(cell)
        if self.runner(cell[1]) is None:
            return (("task", parts["task"]), ("config", parts["config"]),
                    ("workspace", parts.get("workspace")))
        return (("hash", parts["hash"]),)

    def is_stale(self, run: Obj[RunBrief]) -> bool:
        """Whether a Run is stale, as `report` decides."""
        rec = run.record
        try:
            cell = (str(rec["task"]["name"]), str(rec["config"]["name"]), str(rec["model"]))
        except (KeyError, TypeError):
            return True
        want, had = self.expected(cell), rec.get("inputs")
        if want is None or not isinstance(had, dict):
            return True
        return any(had.get(key) != value for key, value in want)

    def reason(self, cell: Cell, run: Obj[RunBrief]) -> str:
        """Why a Run of `cell` is stale: the first of REASONS that applies."""
        if cell[0] not in self.tasks:
            return TASK_DELETED
        if cell[1] not in self.ev.configs:
            return CONFIG_DELETED
        changed = differences(run.record.get("inputs"), self._inputs(cell))
        return changed[0] if changed else CHANGES[2]      # a record without inputs

    def count(self, stale: Iterable[tuple[Cell, Obj[RunBrief]]]) -> dict[str, int]:
        """Stale Runs by reason, in the order of REASONS (reasons with no Run left out)."""
        found = Counter(self.reason(cell, run) for cell, run in stale)
        return {reason: found[reason] for reason in REASONS if found[reason]}
