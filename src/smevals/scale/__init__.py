"""Scale-out: attempt and grade on a Dask cluster while this process alone writes the store.

Nothing here imports dask at module level; `dask` is an optional extra of smevals.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from smevals.errors import SmevalsError


@dataclass(frozen=True)
class ClusterSpec:
    address: str                                         # the scheduler, e.g. tcp://host:8786
    resources: dict[str, float] = field(default_factory=dict)   # per attempt / Grade


def parse_resources(values: tuple[str, ...] | list[str]) -> dict[str, float]:
    """`GPU=1`, `MEMORY=4e9,GPU=1` -> {"GPU": 1.0, ...}; SmevalsError for a bad one."""
    out: dict[str, float] = {}
    for value in values:
        for part in filter(None, (p.strip() for p in value.split(","))):
            name, eq, amount = part.partition("=")
            try:
                number = float(amount)
            except ValueError:
                number = -1.0
            if not eq or not name.strip() or number < 0:
                raise SmevalsError(f"--dask-resources: '{part}' is not NAME=AMOUNT "
                                   "(for example GPU=1)")
            out[name.strip()] = number
    return out
