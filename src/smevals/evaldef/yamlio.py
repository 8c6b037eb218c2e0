"""What one YAML authoring file is read into (`YamlDoc`: plain data plus the line and column
of every field) and the limits on it; `yamlparse.load_yaml` reads it (PyYAML is imported
there, only when a file is parsed).

Duplicate keys are an error (PyYAML would silently keep the last one), and so are non-UTF-8
bytes, tabs used for indentation, and other syntax errors: each becomes a `Problem` that
names the file, the line and the column.

Every value must be one a record can hold exactly (canonical JSON, environment variables,
file names), so the nodes are checked before anything is built from them: lists and
mappings at most MAX_DEPTH levels deep; strings without a NUL character; integers within
64 bits; finite numbers only (`.inf`, `-.inf`, `.nan` and `1e999` are refused, never
turned into null or into "no limit"); no YAML type beyond strings, numbers, booleans, null,
dates, lists and mappings (`!!set`, `!!binary`, `!!omap`, `!!pairs` and custom tags are
refused). Each refusal is a `Problem` at the value's line and column, naming its field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from smevals.errors import Problem

Pos = tuple[int, int]
FieldPath = tuple[str | int, ...]
MAX_ALIAS_NODES = 100_000     # nodes aliases may add to a document once expanded
MAX_DEPTH = 100               # levels of lists and mappings (hashing needs fewer than 255)
INT_MIN, INT_MAX = -(1 << 63), (1 << 63) - 1      # what canonical JSON (orjson) holds


@dataclass
class YamlDoc:
    """A loaded document: its data and the 1-based (line, col) of each field path."""

    path: str
    data: Any
    locs: dict[FieldPath, Pos] = field(default_factory=dict)     # where each key starts
    vlocs: dict[FieldPath, Pos] = field(default_factory=dict)    # where each value starts
    raw: bytes = b""

    def pos(self, where: FieldPath) -> Pos:
        """The position of the nearest known field on the path (the document start at worst)."""
        for cut in range(len(where), -1, -1):
            if where[:cut] in self.locs:
                return self.locs[where[:cut]]
        return (1, 1)

    def problem(self, where: FieldPath, message: str, at_value: bool = False) -> Problem:
        line, col = self.vlocs[where] if at_value and where in self.vlocs else self.pos(where)
        return Problem(self.path, line, col, message, dotted(where))


def dotted(where: FieldPath) -> str:
    """`("checks", 0, "checker")` -> `checks[0].checker`."""
    out = ""
    for part in where:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class YamlProblem(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem
        super().__init__(problem.render())
