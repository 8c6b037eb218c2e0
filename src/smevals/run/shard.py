"""`--shard i/n`: a deterministic share of the planned work, for CI matrices and job arrays.

Each unit of work (a Run to make, a Run to grade) goes to the shard picked by a hash of
its names and sample slot, so the n shards together plan exactly what one unsharded
command plans, and the same command on another machine picks the same share.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import replace
from typing import NamedTuple

from smevals.errors import SmevalsError
from smevals.run.plan import Job, JobPlan, PairPlan

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class Shard(NamedTuple):
    number: int     # 1-based
    total: int

    def __str__(self) -> str:
        return f"{self.number}/{self.total}"

    def takes(self, *parts: object) -> bool:
        """Whether the unit named by `parts` belongs to this shard."""
        key = "\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
        slot = int.from_bytes(hashlib.sha256(key).digest()[:8], "big") % self.total
        return slot == self.number - 1


def parse_shard(text: str | None) -> Shard | None:
    """`2/3` -> Shard(2, 3); None for no sharding; SmevalsError (exit 2) for a bad value."""
    if text is None:
        return None
    match = _SHARD.match(text)
    if not match:
        raise SmevalsError(f"--shard: '{text}' is not I/N (for example 2/3)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise SmevalsError(f"--shard: '{text}' needs 1 <= I <= N (for example 1/{max(count, 2)})")
    return Shard(index, count)


def shard_plan(jobs: JobPlan, pairs: list[PairPlan], shard: Shard | None,
               config: str) -> tuple[JobPlan | list[Job], list[PairPlan]]:
    """The Jobs of this shard (by task, config, model and sample slot), and each pair's
    count of them."""
    if shard is None:
        return jobs, pairs
    kept = [job for job in jobs if shard.takes(job.task.name, config, job.model, job.sample)]
    mine = Counter((job.task.name, job.model) for job in kept)
    return kept, [replace(p, wanted=mine[(p.task, p.model)]) for p in pairs]
