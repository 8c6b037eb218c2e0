"""The record types of store/records.py name the keys the record schemas name, and call
the same keys required: a key added to one and not the other fails here."""

from __future__ import annotations

from typing import Any

import pytest

from smevals.schemas import load_schema
from smevals.store import records
from tests.helpers.typeddicts import key_differences
from tests.helpers.typeddicts import typed_keys as helper_keys

# (schema, path to an object schema in it, the TypedDict of that object)
PAIRS = [
    ("run", (), records.RunRecord),
    ("run", ("properties", "inputs"), records.Inputs),
    ("run", ("properties", "failure"), records.Failure),
    ("run", ("properties", "truncated", "additionalProperties"), records.Truncation),
    ("run", ("$defs", "files", "items"), records.FileEntry),
    ("grade", (), records.GradeRecord),
    ("grade", ("properties", "run"), records.RunRef),
    ("grade", ("properties", "grader"), records.GraderRef),
    ("grade", ("properties", "checks", "items"), records.CheckRecord),
    ("grade", ("properties", "judge"), records.JudgeUsage),
    ("grade", ("properties", "label"), records.Label),
    ("grade", ("properties", "files", "items"), records.FileEntry),
    ("usage", (), records.Usage),
    ("judge", (), records.JudgeEntry),
    ("judge", ("properties", "request"), records.JudgeRequest),
    ("judge", ("properties", "request", "properties", "images", "items"), records.ImageRef),
    ("judge", ("properties", "response"), records.JudgeResponse),
]

# Keys a record type holds only while a record is being made (never written).
WORKING_KEYS = {records.CheckRecord: {"_weight"}}


def typed_keys(typed: Any) -> tuple[set[str], set[str]]:
    """All keys of a TypedDict and its required ones (tests/helpers/typeddicts.py)."""
    return helper_keys(typed, WORKING_KEYS.get(typed, set()))


def schema_node(kind: str, path: tuple[str, ...]) -> dict[str, Any]:
    node: dict[str, Any] = load_schema(kind)
    for step in path:
        node = node[step]
    return node


def differences(kind: str, path: tuple[str, ...], typed: Any) -> list[str]:
    """What the schema node at `path` and the TypedDict `typed` disagree on."""
    return key_differences(schema_node(kind, path), typed, WORKING_KEYS.get(typed, set()))


@pytest.mark.parametrize(("kind", "path", "typed"), PAIRS,
                         ids=[f"{k}:{'.'.join(p) or 'record'}" for k, p, _ in PAIRS])
def test_the_record_type_and_its_schema_name_the_same_keys(kind: str, path: tuple[str, ...],
                                                           typed: Any) -> None:
    assert differences(kind, path, typed) == []


def test_a_difference_is_found() -> None:
    """The comparison can fail: the Run reference against the grader reference."""
    assert differences("grade", ("properties", "run"), records.GraderRef) == [
        "only in the schema: config", "only in the schema: id", "only in the schema: model",
        "only in the schema: rel", "only in the schema: task",
        "only in GraderRef: file", "only in GraderRef: name", "only in GraderRef: version",
        "required by one only: config", "required by one only: id",
        "required by one only: model", "required by one only: name",
        "required by one only: rel", "required by one only: task",
        "required by one only: version"]
    # NotRequired is read from the annotation: Failure requires both keys, FileEntry one.
    assert typed_keys(records.FileEntry)[1] == {"path"}
