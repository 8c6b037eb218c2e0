"""How far two graders agree on the Runs both graded: counts, accuracy, Cohen's kappa with
a 95% interval, the confusion matrix, and the Runs where they disagree.

Pure functions over Grade records; `smevals report --agreement` picks the Grades.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from smevals.stats import Z95
from smevals.store.read import Obj
from smevals.store.records import GradeRecord

ORDER = ("pass", "fail", "error")


@dataclass
class Disagreement:
    run: str
    task: str
    config: str
    model: str
    a: str
    b: str
    a_why: str
    b_why: str


@dataclass
class Agreement:
    a: str                           # "grader @ version" shown
    b: str
    only_a: int = 0
    only_b: int = 0
    matrix: dict[tuple[str, str], int] = field(default_factory=dict)
    disagreements: list[Disagreement] = field(default_factory=list)

    @property
    def both(self) -> int:
        return sum(self.matrix.values())

    @property
    def agreed(self) -> int:
        return sum(n for (x, y), n in self.matrix.items() if x == y)

    @property
    def categories(self) -> list[str]:
        seen = {c for pair in self.matrix for c in pair}
        return [c for c in ORDER if c in seen] + sorted(seen - set(ORDER))

    @property
    def accuracy(self) -> float | None:
        return self.agreed / self.both if self.both else None

    @property
    def kappa(self) -> tuple[float, float, float] | None:
        return cohen_kappa(self.matrix)


def cohen_kappa(matrix: dict[tuple[str, str], int]) -> tuple[float, float, float] | None:
    """(kappa, low, high): Cohen's kappa and its 95% interval from the large-sample standard
    error sqrt(po (1 - po) / (n (1 - pe)^2)) (Cohen 1960), clipped to [-1, 1]. None when
    there are no Runs, or when both graders gave every Run one and the same outcome
    (chance agreement is 1: kappa is undefined)."""
    n = sum(matrix.values())
    if not n:
        return None
    cats = {c for pair in matrix for c in pair}
    po = sum(v for (x, y), v in matrix.items() if x == y) / n
    rows = {c: sum(v for (x, _), v in matrix.items() if x == c) / n for c in cats}
    cols = {c: sum(v for (_, y), v in matrix.items() if y == c) / n for c in cats}
    pe = sum(rows[c] * cols[c] for c in cats)
    if pe >= 1:
        return None
    kappa = (po - pe) / (1 - pe)
    half = Z95 * math.sqrt(po * (1 - po) / (n * (1 - pe) ** 2))
    return kappa, max(-1.0, kappa - half), min(1.0, kappa + half)


def first_failing(record: GradeRecord) -> str:
    """The first failing Check of a Grade and the first line of its notes."""
    for check in record.get("checks") or []:
        if isinstance(check, dict) and not check.get("skipped") and not check.get("ok"):
            notes = str(check.get("notes") or "").strip().splitlines()
            name = check.get("name") or check.get("checker")
            return f"{name}: {notes[0]}" if notes else str(name)
    return ""


def compare(a: str, b: str, a_grades: dict[str, Obj[GradeRecord]],
            b_grades: dict[str, Obj[GradeRecord]]) -> Agreement:
    """`a_grades`, `b_grades`: the Grade that counts for each Run rel, of each grader."""
    out = Agreement(a, b, only_a=len(a_grades.keys() - b_grades.keys()),
                    only_b=len(b_grades.keys() - a_grades.keys()))
    for rel in sorted(a_grades.keys() & b_grades.keys()):
        ra, rb = a_grades[rel].record, b_grades[rel].record
        x, y = str(ra.get("outcome")), str(rb.get("outcome"))
        out.matrix[(x, y)] = out.matrix.get((x, y), 0) + 1
        if x != y:
            run = ra.get("run") or {}
            out.disagreements.append(Disagreement(
                str(run.get("id")), str(run.get("task")), str(run.get("config")),
                str(run.get("model")), x, y, first_failing(ra), first_failing(rb)))
    return out


def as_json(name: str, ag: Agreement) -> dict[str, Any]:
    kappa = ag.kappa
    return {
        "eval": name, "grader": ag.a, "against": ag.b, "both": ag.both,
        "only_grader": ag.only_a, "only_against": ag.only_b, "agreed": ag.agreed,
        "accuracy": ag.accuracy, "kappa": None if kappa is None else kappa[0],
        "kappa_ci": None if kappa is None else [kappa[1], kappa[2]],
        "matrix": [{"grader": x, "against": y, "runs": n}
                   for (x, y), n in sorted(ag.matrix.items())],
        "disagreements": [vars(d) for d in ag.disagreements],
    }


def markdown(name: str, ag: Agreement) -> str:
    lines = [f"# {name}: {ag.a} against {ag.b}", "",
             f"Runs graded by both: {ag.both} · only by {ag.a}: {ag.only_a} · "
             f"only by {ag.b}: {ag.only_b}", ""]
    if not ag.both:
        return "\n".join([*lines, "No Run was graded by both: nothing to compare.", ""])
    cats = ag.categories
    lines += [f"| {ag.a} \\ {ag.b} | " + " | ".join(cats) + " |",
              "| --- | " + " | ".join("---:" for _ in cats) + " |"]
    lines += [f"| {x} | " + " | ".join(str(ag.matrix.get((x, y), 0)) for y in cats) + " |"
              for x in cats]
    kappa = ag.kappa
    shown = "undefined (both gave every Run the same outcome)" if kappa is None else \
        f"{kappa[0]:.3f} (95% interval {kappa[1]:.3f} to {kappa[2]:.3f})"
    lines += ["", f"- Agreement (accuracy): {ag.agreed} of {ag.both} "
              f"({100 * (ag.accuracy or 0):.1f}%)", f"- Cohen's kappa: {shown}", ""]
    lines += _disagreements(ag)
    return "\n".join(lines)


def _disagreements(ag: Agreement) -> list[str]:
    if not ag.disagreements:
        return ["No disagreements.", ""]
    lines = [f"## Disagreements ({len(ag.disagreements)})", "",
             f"| Run | task | config | model | {ag.a} | {ag.b} | first failing check |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for d in ag.disagreements:
        why = d.a_why if d.a != "pass" else d.b_why
        lines.append(f"| {d.run} | {_cell(d.task)} | {_cell(d.config)} | {_cell(d.model)} | "
                     f"{d.a} | {d.b} | {_cell(why)} |")
    return [*lines, ""]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
