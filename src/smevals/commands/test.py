"""`smevals test`: run each grader over the fixtures beside it, never touching a store.

Every fixture of every Eval is loaded and checked first: a bad one (schema, unknown Task,
a path leaving its folder) stops the command with exit 2 before any checker runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from smevals.errors import Problem, SmevalsError, SpecError
from smevals.evaldef.load import display_path
from smevals.evaldef.model import Eval, Grader
from smevals.evaldef.pick import load_evals
from smevals.grade.problems import checked_grader
from smevals.grade.version import grader_version
from smevals.graderfixtures.cases import Case, load_cases
from smevals.graderfixtures.harness import Outcome, run_case
from smevals.proc.launch import ProcessGroups


@dataclass
class Suite:
    """One grader of one Eval with its fixtures."""

    ev: Eval
    grader: Grader
    version: str
    cases: list[Case]
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"{self.ev.name}/{self.grader.name}"


@dataclass
class Plan:
    suites: list[Suite]
    without: list[str]           # "<eval>: no fixtures ..." for Evals that have none


def plan_tests(paths: tuple[str, ...], graders: tuple[str, ...]) -> Plan:
    """The graders to test and their fixtures; exit 2 on any bad fixture or when none."""
    suites: list[Suite] = []
    without: list[str] = []
    problems: list[Problem] = []
    for ev in load_evals(paths or (".",)):
        mine = []
        for name in graders or tuple(sorted(ev.graders)):
            grader = checked_grader(ev, name)
            before = len(problems)
            cases = load_cases(ev, grader, problems)
            if cases or len(problems) > before:
                mine.append(Suite(ev, grader, grader_version(grader), cases))
        if not mine:
            without.append(_none_for(ev, graders))
        suites.extend(mine)
    if problems:
        raise SpecError(problems)
    if not suites:
        raise SmevalsError("no fixtures to test:\n  " + "\n  ".join(without))
    return Plan(suites, without)


def _none_for(ev: Eval, graders: tuple[str, ...]) -> str:
    names = graders or tuple(sorted(ev.graders)) or ("default",)
    where = " or ".join(display_path(ev.path / "graders" / f"{n}.fixtures") for n in names)
    return f"{ev.name}: no fixtures (put cases in {where})"


def run_tests(plan: Plan, done: Callable[[Suite], None]) -> list[Suite]:
    environ = dict(os.environ)
    groups = ProcessGroups()
    try:
        for suite in plan.suites:
            for case in suite.cases:
                suite.outcomes.append(run_case(suite.ev, suite.grader, suite.version, case,
                                               environ, groups))
            done(suite)
    except BaseException:
        groups.cancel()
        raise
    return plan.suites

