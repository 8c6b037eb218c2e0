"""The imported grader: each promptfoo assertion placed as a Check, and what became of it.

A defaultTest assertion whose value needs no var is one Check for every Task; any other
assertion's Check reads its value from the Task (`{task: KEY}`, `if_task_has: KEY`), and
tests whose assertions have the same type and options share that Check. Check names are
distinct: the assertion's `metric` or type, then `-2`, `-3`...
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from smevals.importers.pf_asserts import APPROXIMATE, VALUE, Mapped

if TYPE_CHECKING:
    from smevals.importers.pf_source import Source

ASSERT_KEYS = frozenset({"type", "value", "threshold", "weight", "metric", "config"})
NOT_IMPORTED = "not imported"
CODE = ("javascript", "python")


@dataclass
class Taken:
    """One assertion as taken from the config: its type, the Mapped Check (or why none),
    and the doc's weight and metric."""

    kind: str
    mapped: Mapped
    doc: dict[str, Any]
    needs_vars: bool = False


@dataclass(frozen=True)
class Placed:
    """One assertion of one promptfoo test, as imported."""

    task: str            # the Task of the test ("test-3")
    position: int        # its place among the test's assertions (defaultTest's first)
    where: str           # file:line of the assertion
    kind: str            # its type
    check: str | None    # the Check's name, None when not imported
    fidelity: str        # exact, approximate or not imported
    why: str = ""


@dataclass
class Built:
    checks: list[dict[str, Any]]
    placed: list[Placed]
    files: dict[str, str]
    literal: bool            # some Check applies to every Task
    keys: set[str]           # the grading keys that make Checks apply
    where: dict[str, str]    # Task → file:line of its test

    def no_check(self, rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
        """(Task, where) of each Task no Check applies to."""
        if self.literal:
            return []
        return [(r["name"], self.where.get(r["name"], "")) for r in rows
                if not self.keys & set(r.get("grading") or {})]


@dataclass
class GraderBuilder:
    src: Source
    checks: list[dict[str, Any]] = field(default_factory=list)
    placed: list[Placed] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    slots: dict[str, str] = field(default_factory=dict)      # signature#n → grading key
    literals: dict[str, str] = field(default_factory=dict)   # signature → Check name
    counts: dict[str, int] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    where: dict[str, str] = field(default_factory=dict)      # Task → file:line of its test

    def place(self, taken: Taken, where: str, task: str, position: int, from_default: bool,
              grading: dict[str, Any], seen: dict[str, int]) -> bool:
        """Place one assertion of a test; whether it is a code (javascript/python) Check,
        which reads the test's vars."""
        mapped = taken.mapped
        if mapped.options is None:
            self.placed.append(Placed(task, position, where, taken.kind, None, NOT_IMPORTED,
                                      mapped.why))
            return False
        self.files.update(mapped.files)
        options = dict(mapped.options)
        if options["checker"] in CODE:
            options["test"] = {"task": "promptfoo_test"}
            if isinstance(taken.doc.get("config"), dict):
                options["config"] = taken.doc["config"]
            if isinstance(taken.doc.get("threshold"), int | float) and "script" in options:
                options["threshold"] = taken.doc["threshold"]
        literal = VALUE not in options.values() or (from_default and not taken.needs_vars)
        sig = json.dumps([taken.kind, {k: ("<value>" if v is VALUE else v)
                                       for k, v in options.items()},
                          taken.doc.get("weight"), taken.doc.get("metric"), mapped.why,
                          mapped.value if literal else None], default=str, sort_keys=True)
        if literal and from_default:
            name = self.literals.get(sig) or self._literal(sig, options, taken)
        else:
            name = self._per_task(sig, options, taken, grading, seen)
        self.placed.append(Placed(task, position, where, taken.kind, name, mapped.fidelity,
                                  mapped.why))
        return options["checker"] in CODE

    def _literal(self, sig: str, options: dict[str, Any], taken: Taken) -> str:
        value = taken.mapped.value
        check = self._check({k: (value if v is VALUE else v) for k, v in options.items()},
                            taken)
        self.literals[sig] = check["name"]
        return str(check["name"])

    def _per_task(self, sig: str, options: dict[str, Any], taken: Taken,
                  grading: dict[str, Any], seen: dict[str, int]) -> str:
        n = seen[sig] = seen.get(sig, 0) + 1
        key = self.slots.get(f"{sig}#{n}")
        if key is None:
            base = taken.kind.replace("-", "_")
            count = self.counts[base] = self.counts.get(base, 0) + 1
            key = self.slots[f"{sig}#{n}"] = f"{base}_{count}"
            check = self._check({k: ({"task": key} if v is VALUE else v)
                                 for k, v in options.items()}, taken)
            check["if_task_has"] = key
            self.slots[f"{sig}#{n}#name"] = check["name"]
        grading[key] = taken.mapped.value if VALUE in options.values() else True
        return self.slots[f"{sig}#{n}#name"]

    def _check(self, options: dict[str, Any], taken: Taken) -> dict[str, Any]:
        base = str(taken.doc.get("metric") or taken.kind)
        name, n = base, 2
        while name in self.names:
            name, n = f"{base}-{n}", n + 1
        self.names.add(name)
        check: dict[str, Any] = {"name": name, **options}
        weight = taken.doc.get("weight")
        if isinstance(weight, int | float) and not isinstance(weight, bool) and weight != 1:
            check["weight"] = weight
        if taken.mapped.fidelity == APPROXIMATE:
            check["description"] = f"Not exactly promptfoo's {taken.kind}: {taken.mapped.why}"
        self.checks.append(check)
        return check

    def finish(self) -> Built:
        keys = {v for k, v in self.slots.items() if not k.endswith("#name")}
        return Built(self.checks, self.placed, self.files, bool(self.literals), keys,
                     self.where)
