"""Load an Eval folder into typed records, collecting every problem with its location."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from smevals.errors import Problem, SpecError
from smevals.evaldef.datafile import is_data_file, read_rows
from smevals.evaldef.defcache import Definitions
from smevals.evaldef.model import Check, Config, Eval, Grader, Task
from smevals.evaldef.paths import path_problem
from smevals.evaldef.schema import schema_problems
from smevals.evaldef.yamlio import YamlDoc, YamlProblem

RESERVED_GRADER = "human"      # the Grades `smevals label` writes
RESERVED_CHECK_KEYS = frozenset(
    {"checker", "type", "name", "description", "required", "creates", "timeout", "weight", "min",
     "depends", "if_task_has"}
)


def display_path(path: Path) -> str:
    """A path as the user should see it: relative to the working folder when shorter, a
    byte that is not UTF-8 written as `\\xff` (so that it can be printed and kept in JSON)."""
    text = str(path)
    if not os.path.isabs(text) and ".." not in text.split(os.sep):
        rel = os.path.normpath(text)          # what relpath gives, without asking the OS
        return printable(rel if len(rel) < len(text) else text)
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return printable(str(path))
    return printable(rel if len(rel) < len(str(path)) else str(path))


def printable(name: str) -> str:
    """`name` (from the file system or argv) with each byte that was not UTF-8 as `\\xff`."""
    if bad_byte(name) is None:
        return name
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def bad_byte(name: str) -> int | None:
    """The first byte of `name` that was not UTF-8 (Python keeps it as a lone surrogate), or
    None when `name` is valid UTF-8."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError as exc:
        return ord(name[exc.start]) - 0xDC00
    return None


def name_problem(path: Path) -> Problem | None:
    """A problem when the file name of `path` is not valid UTF-8: the name of an Eval's file
    is a name records keep (a Task's, a Config's), and records are UTF-8."""
    byte = bad_byte(path.name)
    if byte is None:
        return None
    return Problem(display_path(path), 1, 1, f"the file name is not valid UTF-8 (byte "
                   f"0x{byte:02x}); rename the file", "name")


def load_eval(path: Path, cached: bool = True) -> Eval:
    """Load and schema-check an Eval; raise SpecError listing every problem. Without
    `cached`, no definitions cache is used or written (for a folder made for one read)."""
    ev, problems = read_eval(path, cached)
    if problems:
        raise SpecError(problems)
    return ev


def read_eval(path: Path, cached: bool = True) -> tuple[Eval, list[Problem]]:
    """The Eval (with whatever loaded cleanly) and every problem found while loading it.
    Files unchanged since they last loaded cleanly are taken from a cache (evaldef/defcache.py)."""
    problems: list[Problem] = []
    defs = Definitions(path, cached)
    head = read_doc(path / "eval.yaml", "eval", problems, defs)
    data = head.data if head and isinstance(head.data, dict) else {}
    if "name" not in data and (byte := bad_byte(path.absolute().name)) is not None:
        problems.append(Problem(display_path(path / "eval.yaml"), 1, 1, f"the Eval's folder "
                                f"name is not valid UTF-8 (byte 0x{byte:02x}); give it a name "
                                "here or rename the folder", "name"))
    found = [t for p in _files(path, "tasks", problems, data=True)
             for t in _tasks(p, problems, defs)]
    tasks = _unique(found, problems)
    configs = [c for c in (_config(p, problems, defs) for p in _files(path, "configs", problems))
               if c]
    graders = [g for g in (_grader(p, problems, defs) for p in _files(path, "graders", problems))
               if g]
    defs.save()
    chosen = _run_configs(head, data, {c.name for c in configs} | {
        os.path.splitext(p.name)[0] for p in _files(path, "configs", [])}, problems)
    ev = Eval(
        name=str(data.get("name") or path.absolute().name),
        path=path,
        description=str(data.get("description", "")),
        tasks=tuple(tasks),
        configs={c.name: c for c in configs},
        graders={g.name: g for g in graders},
        run_configs=chosen,
    )
    return ev, problems


def _run_configs(head: YamlDoc | None, data: dict[str, Any], have: set[str],
                 problems: list[Problem]) -> tuple[str, ...]:
    """eval.yaml's `configs` (the Configs `run` uses without -c), each a Config of the Eval;
    `("default",)` when it is not given."""
    names = data.get("configs")
    if not isinstance(names, list) or head is None:
        return ("default",)
    for i, name in enumerate(names):
        if name not in have:
            problems.append(head.problem(("configs", i), f"no config named '{name}' in "
                                         f"configs/ (have: {', '.join(sorted(have)) or 'none'})",
                                         at_value=True))
    return tuple(str(n) for n in names)


def _files(root: Path, sub: str, problems: list[Problem], data: bool = False) -> list[Path]:
    """The authoring files of `root/sub` in name order (with `data`, data files too); a
    file whose name is not UTF-8 is a problem instead."""
    folder = root / sub
    try:
        with os.scandir(folder) as entries:
            names = sorted(e.name for e in entries
                           if (os.path.splitext(e.name)[1] in (".yaml", ".yml")
                               or (data and is_data_file(e.name))) and e.is_file())
    except (NotADirectoryError, FileNotFoundError):
        return []
    found = [(folder / name, name_problem(folder / name)) for name in names]
    problems.extend(problem for _, problem in found if problem is not None)
    return [path for path, problem in found if problem is None]


def read_doc(path: Path, kind: str, problems: list[Problem],
             defs: Definitions | None = None) -> YamlDoc | None:
    """One authoring file, a mapping that matches the `kind` schema; else None, the
    problems (file, line, field) added to `problems`. With `defs`, taken from there while
    the file is unchanged, and kept there when it loads cleanly."""
    shown = display_path(path)
    stamp, doc = defs.get(path, shown) if defs else (None, None)
    if doc is not None:
        return doc
    doc = _read_doc(path, shown, kind, problems)
    if doc is not None and defs is not None:
        defs.put(path, stamp, doc, keep_raw=kind == "grader")
    return doc


def _read_doc(path: Path, shown: str, kind: str, problems: list[Problem]) -> YamlDoc | None:
    from smevals.evaldef.yamlparse import load_yaml  # PyYAML: only when a file is parsed

    try:
        doc = load_yaml(path, shown)
    except YamlProblem as exc:
        problems.append(exc.problem)
        return None
    if doc.data is None and kind == "eval":
        doc.data = {}
    if not isinstance(doc.data, dict):
        what = "empty" if doc.data is None else f"a {type(doc.data).__name__}"
        problems.append(doc.problem((), f"the top level must be a mapping, but the file is {what}"))
        return None
    found = schema_problems(doc, kind)
    problems.extend(found)
    return None if found else doc


def _named(doc: YamlDoc, path: Path, problems: list[Problem], kind: str) -> str | None:
    name = doc.data.get("name", path.stem)
    if name != path.stem:
        problems.append(doc.problem(("name",), f"{kind} name '{name}' differs from its file name "
                                    f"'{path.name}' (rename one so they match)", at_value=True))
        return None
    return str(name)


def _tasks(path: Path, problems: list[Problem], defs: Definitions) -> list[Task]:
    """The Tasks of one file of tasks/: a YAML Task, or every good row of a data file."""
    if not is_data_file(path.name):
        task = _task(path, problems, defs)
        return [task] if task else []
    shown = display_path(path)
    stamp, doc = defs.get(path, shown)
    if doc is not None and _rows(doc.data):
        rows = doc.data
    else:
        rows, found = read_rows(path, shown)
        problems.extend(found)
        if not found:
            defs.put(path, stamp, YamlDoc(shown, rows), keep_raw=False)
    return [Task(name=name, path=path, doc=data, grading=grading, line=line)
            for line, name, data, grading in rows]


def _rows(data: object) -> bool:
    """Whether a cache entry holds rows as read_rows returns them (else it is read again)."""
    return isinstance(data, list) and all(
        type(row) is tuple and len(row) == 4 and type(row[1]) is str and type(row[2]) is dict
        and type(row[3]) is dict for row in data)


def _unique(tasks: list[Task], problems: list[Problem]) -> list[Task]:
    """The Tasks, the first of each name only: every later one is a problem naming both places.
    (Distinct names never share a store folder: store/layout.py's slug keeps them apart.)"""
    seen: dict[str, Task] = {}
    out = []
    for task in tasks:
        first = seen.setdefault(task.name, task)
        if first is task:
            out.append(task)
            continue
        problems.append(Problem(display_path(task.path), *task.pos("name"),
                                f"task name '{task.name}' is already used by {where(first)}",
                                "name"))
    return out


def where(task: Task) -> str:
    """`tasks/one.yaml`, or `tasks/questions.jsonl:7` for a row of a data file."""
    shown = display_path(task.path)
    return f"{shown}:{task.line}" if task.line else shown


def _task(path: Path, problems: list[Problem], defs: Definitions) -> Task | None:
    doc = read_doc(path, "task", problems, defs)
    if doc is None or (name := _named(doc, path, problems, "task")) is None:
        return None
    data = dict(doc.data)
    grading = data.pop("grading", None) or {}
    data["name"] = name
    return Task(name=name, path=path, doc=data, grading=dict(grading), locs=doc.locs)


def _config(path: Path, problems: list[Problem], defs: Definitions) -> Config | None:
    doc = read_doc(path, "config", problems, defs)
    if doc is None or (name := _named(doc, path, problems, "config")) is None:
        return None
    data: dict[str, Any] = dict(doc.data)
    timeout = data.get("timeout")
    return Config(name=name, path=path, doc=data, runner=str(data["runner"]).strip(),
                  model=data.get("model"), timeout=float(timeout) if timeout else None,
                  locs=doc.locs, vlocs=doc.vlocs)


def _grader(path: Path, problems: list[Problem], defs: Definitions) -> Grader | None:
    doc = read_doc(path, "grader", problems, defs)
    if doc is None or (name := _named(doc, path, problems, "grader")) is None:
        return None
    if name == RESERVED_GRADER:
        problems.append(doc.problem((), f"the grader name '{name}' is reserved for people's "
                                    "labels (`smevals label`); rename the file"))
        return None
    scoring = doc.data.get("scoring") or {}
    checks = tuple(_check(i, spec) for i, spec in enumerate(doc.data["checks"]))
    if bad := _creates_problems(doc, checks):
        problems.extend(bad)
        return None
    return Grader(name=name, path=path, doc=dict(doc.data), raw=doc.raw, checks=checks,
                  pass_threshold=scoring.get("pass_threshold"),
                  method=scoring.get("method", "last"),
                  locs=doc.locs, vlocs=doc.vlocs)


def _creates_problems(doc: YamlDoc, checks: tuple[Check, ...]) -> list[Problem]:
    """Each file a Check promises to create is inside the workspace (`creates:
    [/etc/passwd]` would be kept by a file that was always there)."""
    out = []
    for check in checks:
        listed = isinstance(check.spec.get("creates"), list)
        for index, name in enumerate(check.creates):
            why = path_problem(name)
            if why is not None:
                where = ("checks", check.index, "creates") + ((index,) if listed else ())
                out.append(doc.problem(where, why, at_value=True))
    return out


def _check(index: int, spec: dict[str, Any]) -> Check:
    creates = spec.get("creates") or ()
    creates = (creates,) if isinstance(creates, str) else tuple(creates)
    depends = spec.get("depends") or ()
    return Check(
        index=index,
        checker=str(spec["checker"]).strip(),
        options={k: v for k, v in spec.items() if k not in RESERVED_CHECK_KEYS},
        spec=dict(spec),
        label=str(spec.get("name") or spec["checker"]),
        required=bool(spec.get("required", False)),
        creates=creates,
        timeout=spec.get("timeout"),
        weight=float(spec.get("weight", 1.0)),
        min_score=spec.get("min"),
        depends=(depends,) if isinstance(depends, str) else tuple(depends),
    )
