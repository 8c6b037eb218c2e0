"""Grader fixtures: the cases in `graders/<grader>.fixtures/`, loaded and checked strictly.

Each case is one YAML file (schemas/fixture.schema.json): a Task (a name or inline keys),
the Run's output and artifacts, and what the grader must conclude. Every file a case names
is read from inside its fixtures folder; a path that leaves it (absolute, `..`, or a
symlink pointing out) is a problem of the case, like a schema violation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, cast

from smevals.errors import Problem
from smevals.evaldef.load import display_path, name_problem, read_doc
from smevals.evaldef.model import Eval, Grader
from smevals.evaldef.yamlio import YamlDoc
from smevals.store.records import Usage

SUFFIX = ".fixtures"
RESERVED_FILES = frozenset({"output.txt", "run.json"})
DEFAULT_MODEL = "fixture"


@dataclass(frozen=True)
class Case:
    name: str
    path: Path
    task: dict[str, Any]             # the Task's keys as a runner sees them (name included)
    grading: dict[str, Any]          # answer keys only checkers see
    output: bytes
    files: dict[str, bytes]          # artifact name in the Run's folder -> content
    usage: Usage | None
    model: str
    expect: str
    failing_check: str | None = None
    notes: str | None = None
    score: dict[str, float] = field(default_factory=dict)
    tags: tuple[str, ...] = ()
    absent_tags: tuple[str, ...] = ()
    description: str = ""
    tampering: tuple[str, ...] | None = None     # the kinds the Grade must mark, exactly


def fixtures_dir(grader: Grader) -> Path:
    """`graders/<grader>.fixtures/`, beside the grader's file."""
    return grader.path.parent / f"{grader.name}{SUFFIX}"


def case_files(folder: Path) -> list[Path]:
    """The case files of a fixtures folder (its YAML files, not those of sub-folders)."""
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries if not e.name.startswith(".")
                           and e.name.endswith((".yaml", ".yml")) and e.is_file())
    except (NotADirectoryError, FileNotFoundError):
        return []
    return [folder / name for name in names]


def load_cases(ev: Eval, grader: Grader, problems: list[Problem]) -> list[Case]:
    """Every case of `grader`; the problems of bad ones are added to `problems`."""
    out = []
    for path in case_files(fixtures_dir(grader)):
        case = load_case(ev, path, problems)
        if case is not None:
            out.append(case)
    return out


def load_case(ev: Eval, path: Path, problems: list[Problem]) -> Case | None:
    if (bad := name_problem(path)) is not None:       # a case's name is its file's
        problems.append(bad)
        return None
    if not path.resolve().is_relative_to(path.parent.resolve()):
        problems.append(Problem(display_path(path), 1, 1, "the case file is a link to a file "
                                "outside the fixtures folder (cases stay inside it)"))
        return None
    doc = read_doc(path, "fixture", problems)
    if doc is None:
        return None
    before = len(problems)
    case = _build(ev, path, doc, problems)
    return case if len(problems) == before else None


def _build(ev: Eval, path: Path, doc: YamlDoc, problems: list[Problem]) -> Case | None:
    data = doc.data
    task, grading = _task(ev, path, doc, problems)
    output = _output(path.parent, doc, problems)
    files = {}
    for name, source in (data.get("files") or {}).items():
        if not safe_name(name):
            problems.append(doc.problem(("files", name), f"'{name}' is not a plain relative "
                                        "file name for the Run's folder (no '..', not "
                                        "absolute, not output.txt or run.json)"))
            continue
        content = read_inside(path.parent, source, doc, ("files", name), problems)
        if content is not None:
            files[name] = content
    usage = _usage(doc, problems)
    if task is None or output is None:
        return None
    score = {k: float(v) for k, v in (data.get("score") or {}).items()}
    return Case(path.stem, path, task, grading, output, files, usage,
                str(data.get("model") or DEFAULT_MODEL), data["expect"],
                data.get("failing_check"), data.get("notes"), score,
                tuple(data.get("tags") or ()), tuple(data.get("absent_tags") or ()),
                str(data.get("description") or ""),
                None if data.get("tampering") is None else tuple(data["tampering"]))


def _task(ev: Eval, path: Path, doc: YamlDoc, problems: list[Problem]
          ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    given = doc.data["task"]
    if isinstance(given, str):
        task = ev.task(given)
        if task is None:
            have = ", ".join(t.name for t in ev.tasks) or "(none)"
            problems.append(doc.problem(("task",), f"no Task named '{given}' in {ev.name} "
                                        f"(tasks: {have})", at_value=True))
            return None, {}
        return dict(task.doc), dict(task.grading)
    inline = dict(given)
    grading = dict(inline.pop("grading", None) or {})
    inline["name"] = str(inline.get("name") or path.stem)
    return inline, grading


def _usage(doc: YamlDoc, problems: list[Problem]) -> Usage | None:
    """The usage as a Run would record it: valid against usage.schema.json, with
    total_tokens filled in from input and output tokens (as `smevals run` does)."""
    usage = doc.data.get("usage")
    if usage is None:
        return None
    from smevals.schemas import packaged

    error = packaged("usage").first(usage)
    if error is not None:
        problems.append(doc.problem(("usage", *error.path), f"does not match "
                                    f"usage.schema.json: {error.message}", at_value=True))
        return None
    usage = dict(usage)
    if "total_tokens" not in usage and {"input_tokens", "output_tokens"} <= usage.keys():
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    return cast(Usage, usage)       # it matched usage.schema.json


def _output(folder: Path, doc: YamlDoc, problems: list[Problem]) -> bytes | None:
    data = doc.data
    if ("output" in data) == ("output_file" in data):
        problems.append(doc.problem((), "give the Run's output as exactly one of output or "
                                    "output_file"))
        return None
    if "output" in data:
        return str(data["output"]).encode("utf-8")
    return read_inside(folder, data["output_file"], doc, ("output_file",), problems)


def safe_name(name: str) -> bool:
    """A plain relative file name for the Run's folder (no `..`, not absolute, not reserved)."""
    parts = PurePosixPath(name).parts
    return (bool(parts) and not name.startswith("/") and "\\" not in name
            and all(p not in ("..", ".") for p in parts) and name not in RESERVED_FILES)


def read_inside(folder: Path, rel: str, doc: YamlDoc, where: tuple[str, ...],
                problems: list[Problem]) -> bytes | None:
    """The bytes of `rel`, a regular file inside `folder`; else a problem at `where`."""
    base = folder.resolve()
    target = (folder / rel).resolve()
    if os.path.isabs(rel) or ".." in PurePosixPath(rel).parts or not target.is_relative_to(base):
        problems.append(doc.problem(where, f"'{rel}' is outside the fixtures folder "
                                    f"{display_path(folder)} (paths stay inside it)",
                                    at_value=True))
        return None
    if not target.is_file():
        problems.append(doc.problem(where, f"no file '{rel}' in {display_path(folder)}",
                                    at_value=True))
        return None
    try:
        return target.read_bytes()
    except OSError as exc:
        problems.append(doc.problem(where, f"cannot read '{rel}': {exc.strerror}",
                                    at_value=True))
        return None
