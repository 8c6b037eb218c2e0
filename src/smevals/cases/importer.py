"""`smevals import ai-eval-forge CASES`: an Eval from a case file, with its Runs recorded.

One Task per case (its `input` as `prompt`; `expected`, `sources` and `checks` under
`grading:`), a `configs/imported.yaml` replaying each case's `actual` (with `costUsd` and
`latencyMs` as usage) through `smevals:replay`, and one grader whose single Check is the
program `graders/forge-case`, which scores a Run exactly as ai-eval-forge scores the case.
The Runs are made by the ordinary run engine, so their inputs hashes are current.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from smevals.cases.casefile import Case, ForgeInputError, read_cases
from smevals.cases.program import PROGRAM
from smevals.cases.scoring import plan_case
from smevals.errors import SmevalsError
from smevals.importers.common import new_eval_folder, staged_folder
from smevals.schemas.editors import PROJECT_DIR, point_comments, write_schemas
from smevals.store.layout import slug

if TYPE_CHECKING:
    pass

CONFIG = "imported"
RESPONSES = "imported.jsonl"
PROGRAM_NAME = "forge-case"


@dataclass(frozen=True)
class Imported:
    eval_dir: Path
    tasks: int
    runs: int
    model: str


# records one Run of each Task of the Eval in a folder with a config and a model: the count
Record = Callable[[Path, str, str], int]


def import_forge(cases_path: Path, out: Path | None, model: str, record: Record) -> Imported:
    """Validate the whole file first (exit 2, nothing written), then write the Eval, and
    its Runs through `record` (the run command's, handed in by the CLI)."""
    cases = read_cases(cases_path)
    if not cases:
        raise ForgeInputError(f"{cases_path}: no cases to import")
    if not model.strip():
        raise SmevalsError("--model must not be empty")
    for case in cases:
        plan_case(case)
    names = _task_names(cases)
    target = out if out is not None else Path(slug(cases_path.stem))
    new_eval_folder(target, " with -o")
    _write_eval(target, cases, names, model, cases_path)
    runs = record(target, CONFIG, model)
    return Imported(target, len(cases), runs, model)


def _task_names(cases: list[Case]) -> list[str]:
    names: list[str] = []
    seen: dict[str, str] = {}
    for case in cases:
        name = slug(case.id)
        if name in seen:
            raise ForgeInputError(f"{case.where}: case id {case.id!r} is used twice (first at "
                                  f"{seen[name]}); every case needs its own id")
        seen[name] = case.where
        names.append(name)
    return names


def _write_eval(target: Path, cases: list[Case], names: list[str], model: str,
                source: Path) -> None:
    with staged_folder(target) as staging:
        _files(staging, cases, names, model, source, target.absolute().name)


def _files(root: Path, cases: list[Case], names: list[str], model: str, source: Path,
           eval_name: str) -> None:
    _yaml(root / "eval.yaml", {"name": eval_name, "description":
                               f"Imported from the ai-eval-forge case file {source.name}"},
          "eval")
    for case, name in zip(cases, names, strict=True):
        _yaml(root / "tasks" / f"{name}.yaml", task_doc(case), "task",
              f"ai-eval-forge case {case.id!r} ({case.where})")
    _yaml(root / "configs" / f"{CONFIG}.yaml", {"description": f"Replays the `actual` of each "
          f"case in {source.name}", "runner": "smevals:replay", "responses": RESPONSES,
          "model": model}, "config")
    lines = [json.dumps(response(case, name, model), ensure_ascii=False)
             for case, name in zip(cases, names, strict=True)]
    (root / "configs" / RESPONSES).write_text("\n".join(lines) + "\n", encoding="utf-8")
    _yaml(root / "graders" / "default.yaml", {
        "description": "Each case's checks, scored as ai-eval-forge scores them (the checks "
                       "are in each Task's grading data)",
        "checks": [{"checker": f"./{PROGRAM_NAME}"}]}, "grader")
    program = root / "graders" / PROGRAM_NAME
    program.write_text(PROGRAM, encoding="utf-8")
    program.chmod(0o755)
    write_schemas(root / PROJECT_DIR)
    point_comments([root], root / PROJECT_DIR)


def task_doc(case: Case) -> dict[str, Any]:
    doc: dict[str, Any] = {"case_id": case.id}
    if isinstance(case.input, str):
        doc["prompt"] = case.input
    elif case.input is not None:
        doc["prompt"] = json.dumps(case.input, ensure_ascii=False)
        doc["input"] = case.input
    if case.tags:
        doc["tags"] = case.tags
    grading: dict[str, Any] = {}
    for key, fallback in (("expected", "reference"), ("sources", None)):
        for name in (key, fallback):
            if name and name in case.raw:
                grading[key] = case.raw[name]
                break
    grading["checks"] = case.checks
    doc["grading"] = grading
    return doc


def response(case: Case, task: str, model: str) -> dict[str, Any]:
    line: dict[str, Any] = {"task": task, "model": model, "output": case.actual}
    usage = {}
    if "costUsd" in case.raw or "costUsd" in case.raw.get("meta", {}):
        usage["cost_usd"] = case.cost_usd
    if "latencyMs" in case.raw or "latencyMs" in case.raw.get("meta", {}):
        usage["latency_ms"] = case.latency_ms
    if usage:
        line["usage"] = usage
    return line


def _yaml(path: Path, doc: dict[str, Any], kind: str, note: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    head = f"# yaml-language-server: $schema={kind}.schema.json\n"    # pointed by _files
    if note:
        head += f"# Imported from {note}.\n"
    body = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
    path.write_text(head + body, encoding="utf-8")
