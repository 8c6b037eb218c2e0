"""`smevals import ai-eval-forge|promptfoo|inspect` (cli/import_cmd.py; `import` is a Python
keyword, so this module takes PEP 8's trailing underscore): each importer writes the Eval,
this module says what it did. The importers are smevals.cases.importer (ai-eval-forge) and
smevals.importers (promptfoo, Inspect)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from smevals.cases.importer import Record


def forge(cases: str, out: str | None, model: str, record: Record) -> list[str]:
    """An Eval from an ai-eval-forge case file, its Runs recorded through `record` (the run
    command's, handed in by the CLI); the lines to print."""
    from smevals.cases.importer import import_forge

    done = import_forge(Path(cases), Path(out) if out else None, model, record)
    where = done.eval_dir
    return [f"Imported {done.tasks} case(s) from {cases} into {where}: {done.tasks} "
            f"task(s), config 'imported', grader 'default', {done.runs} Run(s) of model "
            f"'{done.model}'",
            f"Next: smevals grade {where} && smevals report {where}"]


def promptfoo(config: str, out: str) -> list[str]:
    """An Eval from a promptfoo config; the lines to print."""
    from smevals.importers.pf_report import console_lines
    from smevals.importers.promptfoo import import_promptfoo

    done = import_promptfoo(Path(config), Path(out))
    grader = f"grader 'default' with {done.checks} Check(s)" if done.checks else "no grader"
    lines = [f"Imported {config} into {out}: {done.tasks} Task(s) in tasks/tests.jsonl, "
             f"{len(done.configs)} Config(s) ({', '.join(done.configs) or 'none'}), {grader}"]
    lines += console_lines(done, str(Path(out) / "README.md"))
    models = all(plan.doc.get("model") for plan in done.plans.values())
    return [*lines, f"Next: smevals validate {out} && smevals run {out} --dry-run"
            + ("" if models else " -m MODEL")]


def inspect(source: str, out: str, scorer: str, solver: str | None,
            system: str | None) -> list[str]:
    """An Eval from an Inspect dataset and the task's scorer; the lines to print."""
    from smevals.importers.inspect import import_inspect, notes

    done = import_inspect(Path(source), Path(out), scorer, solver, system)
    return [f"Imported {source} into {out}: {done.tasks} Task(s) in {done.data_file}, "
            "config 'default' (a stub: give it a model), grader 'default'",
            *(f"  {note}" for note in notes(done, scorer)),
            f"Next: smevals validate {out} && smevals run {out} --dry-run -m MODEL"]
