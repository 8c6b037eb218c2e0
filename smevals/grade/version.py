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
    return sha256_bytes(dumps(spec))[:VERSION_CHARS]


def grading_hash(grading: dict[str, object]) -> str:
    return sha256_bytes(dumps(grading))[:VERSION_CHARS]
