"""What `smevals import promptfoo` says it did, on the console and in the Eval's README.md:
how many assertions were kept exactly, and each one kept by another rule or not imported
(file:line, the tests it belongs to, why); the Tasks no Check applies to; the other items
left out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals.importers.pf_asserts import APPROXIMATE, EXACT
from smevals.importers.pf_configs import ConfigPlan
from smevals.importers.pf_grader import NOT_IMPORTED, Placed
from smevals.importers.pf_source import Skipped

if TYPE_CHECKING:
    from smevals.importers.pf_source import Source

SHOWN = 20          # lines of each list printed on the console (README.md has them all)
WORDS = {APPROXIMATE: "kept by another rule", NOT_IMPORTED: "not imported"}


@dataclass(frozen=True)
class PromptfooImport:
    eval_dir: Path
    tasks: int
    configs: list[str]
    checks: int
    skipped: list[Skipped]
    assertions: list[Placed] = field(default_factory=list)
    no_check: list[tuple[str, str]] = field(default_factory=list)   # (Task, where)
    plans: dict[str, ConfigPlan] = field(default_factory=dict)
    vars: dict[str, dict[str, Any]] = field(default_factory=dict)   # Task → its test's vars

    def count(self, fidelity: str) -> int:
        return sum(a.fidelity == fidelity for a in self.assertions)


def assertion_lines(placed: Sequence[Placed]) -> list[str]:
    """One line per assertion not kept exactly, its tests gathered: `where: kind (tests):
    kept by another rule: why`."""
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for p in placed:
        if p.fidelity != EXACT:
            groups.setdefault((p.where, p.kind, p.fidelity, p.why), []).append(p.task)
    return [f"{where}: {kind} assertion ({_tasks(tasks)}): {WORDS[fidelity]}: {why}"
            for (where, kind, fidelity, why), tasks in groups.items()]


def _tasks(tasks: list[str]) -> str:
    unique = list(dict.fromkeys(tasks))
    if len(unique) <= 3:
        return ", ".join(unique)
    return f"{', '.join(unique[:2])} and {len(unique) - 2} more"


def counts(done: PromptfooImport) -> str:
    return (f"{done.count(EXACT)} kept exactly, {done.count(APPROXIMATE)} kept by another "
            f"rule, {done.count(NOT_IMPORTED)} not imported")


def console_lines(done: PromptfooImport, readme: str) -> list[str]:
    lines = []
    odd = assertion_lines(done.assertions)
    if done.assertions:
        lines.append(f"Assertions: {counts(done)}" + (
            f" (each below, and in {readme}):" if odd else ""))
        lines += _shown([f"  {line}" for line in odd], readme)
    if done.skipped:
        lines.append(f"Not imported: {len(done.skipped)} other item(s) (also in {readme}):")
        lines += _shown([f"  {item.line()}" for item in done.skipped], readme)
    if done.no_check:
        lines.append(f"Tasks with no Check ({len(done.no_check)}; their Grades are errors, "
                     "'no Check applied'): " + _no_check(done.no_check))
    if not odd and not done.skipped and not done.no_check:
        lines.append("Everything was imported, each assertion kept exactly.")
    return lines


def _shown(lines: list[str], readme: str) -> list[str]:
    if len(lines) <= SHOWN:
        return lines
    return lines[:SHOWN] + [f"  ... and {len(lines) - SHOWN} more (all in {readme})"]


def _no_check(tasks: list[tuple[str, str]]) -> str:
    shown = [f"{name} ({where})" if where else name for name, where in tasks[:5]]
    more = f" and {len(tasks) - 5} more" if len(tasks) > 5 else ""
    return ", ".join(shown) + more


def readme(src: Source, done: PromptfooImport) -> str:
    configs = ", ".join(done.configs) or "none"
    lines = [f"# Imported from {src.path.name}", "",
             f"`smevals import promptfoo` made {done.tasks} Task(s) (`tasks/tests.jsonl`), "
             f"{len(done.configs)} Config(s) ({configs}) and a grader with {done.checks} "
             "Check(s) (`graders/default.yaml`). `smevals run` on this folder runs every "
             "Config" + (" (eval.yaml lists them)." if done.configs != ["default"] else "."),
             ""]
    if done.assertions:
        lines += [f"## Assertions ({len(done.assertions)})", "",
                  f"{counts(done)}. A Check kept exactly decides as promptfoo 0.121 decides "
                  "the assertion; the others are listed here with their file and line.", ""]
        lines += [f"- `{line.split(': ', 1)[0]}`: {line.split(': ', 1)[1]}"
                  for line in assertion_lines(done.assertions)]
        lines.append("")
    if done.no_check:
        lines += [f"## Tasks with no Check ({len(done.no_check)})", "",
                  "No Check applies to these Tasks: promptfoo passes a test without "
                  "assertions; smevals grades it as an error, 'no Check applied'.", ""]
        lines += [f"- {name}" + (f" (`{where}`)" if where else "")
                  for name, where in done.no_check]
        lines.append("")
    if done.skipped:
        lines += [f"## Not imported ({len(done.skipped)})", "",
                  "These have no counterpart in smevals and were left out:", ""]
        lines += [f"- `{s.where}`: {s.what}: {s.why}" for s in done.skipped]
        lines.append("")
    if not done.skipped and not done.no_check and not assertion_lines(done.assertions):
        lines += ["Everything in the config was imported, each assertion kept exactly.", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
