"""`run -n N` with other `run -n` at work on the same store: each cell (task, config, model)
gets exactly N successful Runs of the current inputs, whoever makes them.

A job first claims its cell (store/claims.py). While a process holds a cell's claim nobody
else adds Runs to it, so the Runs on disk, counted when the claim is taken, plus the
attempts this process admitted since, are exactly the cell's Runs. A job that would go past
N is skipped. A failed attempt gives its place back.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import TypeVar

from smevals.run.plan import Job
from smevals.store.claims import claims_for
from smevals.store.layout import object_parent
from smevals.store.read import Store

T = TypeVar("T")


class TopUp:
    def __init__(self, store: Store, config: str, repeat: int):
        self.store = store
        self.config = config
        self.repeat = repeat
        self.claims = claims_for(store.root, "run")
        self._lock = threading.Lock()
        # cell -> [holders, Runs on disk, attempts admitted, next sample index]
        self._cells: dict[tuple[str, str, str], list[int]] = {}
        # (cell, inputs hash) -> (ids of the cell's Runs read so far, how many count): Runs
        # are only ever added, so each is read once, not again at every admission
        self._read: dict[tuple[str, str, str, str], tuple[set[str], int]] = {}

    def run(self, job: Job, attempt: Callable[[Job], T | None],
            cancelled: Callable[[], bool]) -> T | None:
        """`attempt(job)` (with the sample index it takes) unless the cell is full; None
        when skipped or cancelled."""
        cell = (job.task.name, self.config, job.model)
        with self.claims.hold("\0".join(cell), cancelled) as got:
            if not got:
                return None
            sample = self._admit(cell, job)
            made: T | None = None
            try:
                if sample is not None:
                    made = attempt(dataclasses.replace(job, sample=sample))
                return made
            finally:
                self._finish(cell, sample is not None, bool(getattr(made, "ok", False)))

    def _admit(self, cell: tuple[str, str, str], job: Job) -> int | None:
        with self._lock:
            state = self._cells.get(cell)
            if state is None:
                on_disk = self._on_disk(cell, job)
                state = self._cells[cell] = [0, on_disk, 0, on_disk]
            state[0] += 1
            if state[1] + state[2] >= self.repeat:
                return None
            state[2] += 1
            state[3] += 1               # sample indexes are never given twice
            return state[3] - 1

    def _finish(self, cell: tuple[str, str, str], admitted: bool, ok: bool) -> None:
        with self._lock:
            state = self._cells[cell]
            state[0] -= 1
            state[2] -= admitted and not ok
            if state[0] == 0:
                del self._cells[cell]

    def _on_disk(self, cell: tuple[str, str, str], job: Job) -> int:
        want = job.inputs["hash"]
        seen, count = self._read.get((*cell, want), (set(), 0))
        runs = self.store.fresh("run", object_parent("run", list(cell)), seen)
        count += sum(1 for r in runs if r.record.get("status") == "ok"
                     and isinstance(r.record.get("inputs"), dict)
                     and r.record["inputs"].get("hash") == want)
        seen.update(r.id for r in runs)
        self._read[(*cell, want)] = (seen, count)
        return count
