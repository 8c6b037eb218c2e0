"""A grader's version: a hash of its parsed spec, every checker program it names, the built-in
catalog's version, and the files those programs import or source or its Checks' `depends:`
name (grade/deps.py). Editing a checker script or a module it imports makes a new version;
reformatting the YAML does not."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from smevals.evaldef.model import Check, Grader
from smevals.evaldef.programs import ProgramError, resolve_program
from smevals.files.canonical import dumps, sha256_bytes
from smevals.files.regular import open_regular

VERSION_CHARS = 12


def checker_program(grader: Grader, check: Check) -> Path | None:
    """The program a Check runs, or None for a built-in (raises ProgramError when missing)."""
    from smevals import checkers

    if checkers.is_builtin(check.checker):
        return None
    from smevals import scope

    found = scope.current().memo(__name__)      # resolved once per command
    key = (grader.path.parent, check.checker)
    if key not in found:
        try:
            found[key] = resolve_program(check.checker, grader.path.parent)
        except ProgramError as exc:
            found[key] = exc
    result: Path | ProgramError = found[key]
    if isinstance(result, ProgramError):
        raise result
    return result


def grader_version(grader: Grader) -> str:
    from smevals import checkers

    found = _programs(grader)
    programs = {name: digest for name, _path, digest in found}
    paths = [path for _name, path, _digest in found if path is not None]
    spec = {"spec": {**grader.doc, "name": grader.name}, "programs": programs,
            "catalog": checkers.CATALOG_VERSION}
    revised = revisions(grader)
    if revised:
        spec["revised"] = revised
    judged = judge_inputs(grader)
    if judged:
        spec["judge"] = judged
    data = database_inputs(grader)
    if data:
        spec["databases"] = data
    depends = dependencies(grader, paths)
    if depends:
        spec["depends"] = depends
    hidden = hidden_inputs(grader)
    if hidden:
        spec["hidden"] = hidden
    return sha256_bytes(dumps(spec))[:VERSION_CHARS]


def _programs(grader: Grader) -> list[tuple[str, Path | None, str]]:
    """Each checker program the grader names: (the name as written, its path, its sha256),
    or (name, None, "missing: ...") when it cannot be found. Built-ins are left out."""
    out: list[tuple[str, Path | None, str]] = []
    for check in grader.checks:
        try:
            path = checker_program(grader, check)
        except ProgramError as exc:
            out.append((check.checker, None, f"missing: {exc}"))
            continue
        if path is not None:
            out.append((check.checker, path, hashlib.sha256(path.read_bytes()).hexdigest()))
    return out


def dependencies(grader: Grader, programs: list[Path]) -> dict[str, str]:
    """sha256 of every file the grader's programs import or source and its Checks' `depends:`
    name (grade/deps.py), by path relative to the Eval folder. Empty for most graders, whose
    versions stay as they were."""
    from smevals.grade import deps

    root = os.path.realpath(deps.eval_dir(grader))
    return {os.path.relpath(path, root).replace(os.sep, "/"): _sha256(path)
            for path in deps.all_dependencies(grader, programs)}


def _sha256(path: Path) -> str:
    """A regular file's sha256, read in blocks (a large data file never sits in memory)."""
    try:
        fd, _info = open_regular(str(path))
        with os.fdopen(fd, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"


def version_files(grader: Grader) -> dict[str, str]:
    """What the grader version covers, by file, for `diff` to say which file changed: path
    in the Eval folder (as the grader names it when outside) -> a hash of its content. The
    grader file stands for its parsed spec; "smevals built-ins" for the rules of smevals'
    own checkers."""
    from smevals import checkers
    from smevals.grade.deps import eval_dir

    root = os.path.realpath(eval_dir(grader))

    def rel(path: Path, written: str) -> str:
        inside = os.path.relpath(os.path.realpath(path), root)
        return written if inside.startswith("..") else inside.replace(os.sep, "/")

    out = {rel(grader.path, grader.path.name):
           sha256_bytes(dumps({**grader.doc, "name": grader.name}))}
    found = _programs(grader)
    out.update({name if path is None else rel(path, name): digest
                for name, path, digest in found})
    paths = [path for _name, path, _digest in found if path is not None]
    judged = judge_inputs(grader)
    builtin = [checkers.CATALOG_VERSION, revisions(grader), judged.pop("templates", None)]
    out["smevals built-ins"] = sha256_bytes(dumps(builtin))
    out.update({rel(grader.path.parent / name, name): digest for name, digest in judged.items()})
    out.update({rel(grader.path.parent / name, name): digest
                for name, digest in database_inputs(grader).items()})
    out.update(dependencies(grader, paths))
    out.update(hidden_inputs(grader))
    return out


# A Check's `min` used to only tighten its checker's verdict; now it is the pass mark.
MIN_RULE = "2: pass iff score >= min"


def revisions(grader: Grader) -> dict[str, str]:
    """The changed rules this grader relies on (empty for most graders, whose versions
    stay as they were): a revised built-in checker it calls, a Check's `min`."""
    from smevals import checkers

    out = {}
    for check in grader.checks:
        name = checkers.canonical_name(check.checker)
        if checkers.is_builtin(name) and name in checkers.REVISED:
            out[name] = checkers.REVISED[name]
        if check.min_score is not None:
            out["min"] = MIN_RULE
    return out


JUDGE_CHECKERS = ("llm_judge", "llm_score", "llm_category", "llm_answer_match", "llm_pairwise")


def judge_inputs(grader: Grader) -> dict[str, str]:
    """For a grader with judge Checks: the shipped prompt templates and every template file
    it names, hashed (a changed template is a new version). Empty for other graders."""
    from smevals import checkers

    names = [c for c in grader.checks if checkers.canonical_name(c.checker) in JUDGE_CHECKERS]
    if not names:
        return {}
    from smevals.judges import templates

    out = {"templates": sha256_bytes(dumps([templates.SYSTEM, templates.DEFAULTS]))}
    for check in names:
        name = check.options.get("template_file")
        if isinstance(name, str):
            path = grader.path.parent / name
            try:
                out[name] = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError as exc:
                out[name] = f"unreadable: {exc.strerror}"
    return out


def database_inputs(grader: Grader) -> dict[str, str]:
    """The file each Check names beside the grader (an SQL Check's `database`, a database or
    a `.sql` script), hashed: editing the data is a new version. Empty for other graders; a
    `database: {task: KEY}` is not seen here."""
    from smevals import checkers

    out = {}
    for check in grader.checks:
        option = checkers.GRADER_FILES.get(checkers.canonical_name(check.checker))
        name = check.options.get(option) if option else None
        if not isinstance(name, str):
            continue
        path = grader.path.parent / name
        out[name] = _sha256(path) if path.is_file() else "missing"
    return out


def hidden_inputs(grader: Grader) -> dict[str, str]:
    """The hidden files `command` Checks copy in (`files:`, relative to the Eval), hashed by
    their path in the Eval: editing a hidden test is a new version. Empty for other graders."""
    from smevals import checkers
    from smevals.evaldef.workspace import WorkspaceError, tree_of
    from smevals.grade.deps import eval_dir

    out: dict[str, str] = {}
    for check in grader.checks:
        files = check.options.get("files")
        if checkers.canonical_name(check.checker) != "command" or not isinstance(
                files, str | list) or not files:
            continue                # none, or the Task's (`{task: KEY}`): grading data
        prefix = f"{files.rstrip('/')}/" if isinstance(files, str) else ""
        try:
            found = tree_of(eval_dir(grader), files)
        except WorkspaceError as exc:
            out[dumps(files).decode()] = f"unusable: {exc}"
            continue
        out.update({prefix + rel: digest for rel, digest in found.sha256.items()})
    return out


def grading_hash(grading: dict[str, object]) -> str:
    return sha256_bytes(dumps(grading))[:VERSION_CHARS]
