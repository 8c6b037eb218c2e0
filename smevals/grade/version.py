"""A grader's version: a hash of its parsed spec, every checker program it names, and the
built-in catalog's version. Editing a checker script makes a new version; reformatting the
YAML does not."""

from __future__ import annotations

import hashlib
from pathlib import Path

from smevals.spec.model import Check, Grader
from smevals.spec.programs import ProgramError, resolve_program
from smevals.store.canonical import dumps, sha256_bytes

VERSION_CHARS = 12


def checker_program(grader: Grader, check: Check) -> Path | None:
    """The program a Check runs, or None for a built-in (raises ProgramError when missing)."""
    from smevals import checkers

    if checkers.is_builtin(check.checker):
        return None
    return resolve_program(check.checker, grader.path.parent)


def grader_version(grader: Grader) -> str:
    from smevals import checkers

    programs = {}
    for check in grader.checks:
        try:
            path = checker_program(grader, check)
        except ProgramError as exc:
            programs[check.checker] = f"missing: {exc}"
            continue
        if path is not None:
            programs[check.checker] = hashlib.sha256(path.read_bytes()).hexdigest()
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
    return sha256_bytes(dumps(spec))[:VERSION_CHARS]


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
        try:
            out[name] = (hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file()
                         else "missing")
        except OSError as exc:
            out[name] = f"unreadable: {exc.strerror}"
    return out


def grading_hash(grading: dict[str, object]) -> str:
    return sha256_bytes(dumps(grading))[:VERSION_CHARS]
