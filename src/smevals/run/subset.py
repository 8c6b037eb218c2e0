"""`run --limit N` and `run --sample N --seed S`: a deterministic subset of an Eval's Tasks.

`--limit N` keeps the first N Tasks in the order given (the Eval's order: its task files by
name, a data file's rows in file order; with `-t`, the order of `-t`). `--sample N --seed S`
keeps the N Tasks whose sha256 of `S`, a NUL byte and the Task's name (UTF-8) is smallest,
in the same order as given. The digest depends on nothing but the seed and the name, so the
same seed chooses the same Tasks on every machine and Python version, and adding a Task
changes the subset by at most one Task (the new one, in place of the chosen Task that now
ranks N+1st).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from smevals.evaldef.model import Task


@dataclass(frozen=True)
class Subset:
    limit: int | None = None
    sample: int | None = None
    seed: str = "0"

    def __bool__(self) -> bool:
        return self.limit is not None or self.sample is not None

    def choose(self, tasks: list[Task]) -> list[Task]:
        if self.limit is not None:
            return tasks[: self.limit]
        if self.sample is None or self.sample >= len(tasks):
            return list(tasks)
        ranked = sorted(tasks, key=lambda t: (sample_key(self.seed, t.name), t.name))
        chosen = {t.name for t in ranked[: self.sample]}
        return [t for t in tasks if t.name in chosen]

    def describe(self, chosen: int, total: int) -> str:
        """`--sample 3 --seed 7 chose 3 of 10 Tasks` (or the first N, for --limit)."""
        if self.limit is not None:
            return f"--limit {self.limit} chose the first {chosen} of {total} Tasks"
        return f"--sample {self.sample} --seed {self.seed} chose {chosen} of {total} Tasks"


def sample_key(seed: str, name: str) -> str:
    """The rank of a Task in a sample: hex sha256 of the seed, NUL and the name."""
    data = f"{seed}\0{name}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()
