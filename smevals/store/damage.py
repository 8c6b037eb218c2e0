"""Damage that readers leave out: a record that does not hash to its object's id, or that
parses but breaks its record schema. (A record that cannot be read at all, or is not a
regular file, is damage too; index.parse_record says so.)

Readers check every record they parse (the index cache keeps the verdict with the record,
keyed by the file's stat stamp or git blob id, so a changed file is always checked again),
and every object left out is noted on the running command (store/scope.py), so that the
command line can say so once, pointing at `smevals verify`.
"""

from __future__ import annotations

import hashlib
from typing import Any

from smevals.store import scope
from smevals.store.layout import ID_RE, RECORD_NAMES


def problem(kind: str, oid: str, data: bytes, record: dict[str, Any]) -> str | None:
    """Why a parsed record cannot be counted, or None when it is sound."""
    name = RECORD_NAMES[kind]
    match = ID_RE.match(oid)
    if match is None:
        return f"folder name '{oid}' is not an object id (<timestamp>-<hash>)"
    if not hashlib.sha256(data).hexdigest().startswith(match.group(2)):
        return f"{name} does not hash to the object's id (edited by hand?)"
    return schema_problem(kind, record)


def schema_problem(kind: str, record: dict[str, Any]) -> str | None:
    """The first place where the record breaks its JSON Schema, or None."""
    from smevals.schemas import packaged

    found = packaged(kind).first(record)
    if found is None:
        return None
    return f"{RECORD_NAMES[kind]} does not match {kind}.schema.json at '{found.slashed}': " \
           f"{found.message}"


def note(label: str, rel: str, why: str) -> None:
    """Remember an object left out by a reader, for the running command."""
    scope.current().note_damaged(label, rel, why)


def found() -> list[tuple[str, str, str]]:
    """(store label, object rel, why) of every object the running command left out so far,
    sorted."""
    return scope.current().found_damaged()


def as_json(label: str) -> list[dict[str, str]]:
    """The objects of one store left out so far, for JSON output."""
    return [{"path": rel, "problem": why} for lab, rel, why in found() if lab == label]
