"""The report JSON's types (report/jsondoc.py) name the keys report.schema.json names, and
what `smevals report --format json` prints matches that schema (docs/reports.md#json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from smevals.report import jsondoc
from smevals.schemas import Schema, load_schema
from smevals.store import records
from tests.helpers.golden import smevals
from tests.helpers.typeddicts import key_differences

DEFS = ("$defs",)
# (path to an object schema in report.schema.json, the TypedDict of that object)
PAIRS: list[tuple[tuple[str, ...], Any]] = [
    ((), jsondoc.ReportDoc),
    (("properties", "filters"), jsondoc.Filters),
    (("properties", "gates"), jsondoc.GatesEntry),
    ((*DEFS, "eval"), jsondoc.EvalEntry),
    ((*DEFS, "eval", "properties", "grader"), jsondoc.GraderChoice),
    ((*DEFS, "eval", "properties", "tags", "items"), jsondoc.TagShare),
    ((*DEFS, "eval", "properties", "damaged", "items"), jsondoc.Damaged),
    ((*DEFS, "summary"), jsondoc.Summary),
    ((*DEFS, "summary", "properties", "tampering"), jsondoc.TamperingCount),
    ((*DEFS, "check"), jsondoc.CheckFigures),
    ((*DEFS, "metric"), jsondoc.MetricFigures),
    ((*DEFS, "task"), jsondoc.TaskFigures),
    ((*DEFS, "leader"), jsondoc.LeaderEntry),
    ((*DEFS, "leader", "properties", "runners", "items"), jsondoc.RunnerCount),
    ((*DEFS, "tamper"), records.TamperMark),
    ((*DEFS, "row"), jsondoc.RowEntry),
    ((*DEFS, "excluded"), jsondoc.ExcludedEntry),
    ((*DEFS, "repeats"), jsondoc.RepeatsEntry),
    ((*DEFS, "repeats", "properties", "cells", "items"), jsondoc.RepeatCell),
    ((*DEFS, "repeats", "properties", "k", "items"), jsondoc.PassAtK),
    ((*DEFS, "suite"), jsondoc.SuiteLine),
]


def node(path: tuple[str, ...]) -> dict[str, Any]:
    found: dict[str, Any] = load_schema("report")
    for step in path:
        found = found[step]
    return found


@pytest.mark.parametrize(("path", "typed"), PAIRS,
                         ids=[".".join(p) or "document" for p, _ in PAIRS])
def test_each_type_names_the_keys_of_its_schema(path: tuple[str, ...], typed: Any) -> None:
    assert key_differences(node(path), typed) == []


def test_every_type_is_held_to_the_schema() -> None:
    """No TypedDict of jsondoc is left out of PAIRS."""
    named = {typed.__name__ for _path, typed in PAIRS if typed is not records.TamperMark}
    assert named == set(jsondoc.__all__) - {"Figures", "GateLimits"}  # parts of others


def test_the_report_matches_its_schema(qa: Path) -> None:
    res = smevals("report", "qa", "--format", "json", "--fail-under", "0.9", cwd=qa.parent)
    assert res.code == 1, res.both          # the gate trips: failures listed
    doc = json.loads(res.out)
    assert doc["gates"]["failures"] and doc["evals"][0]["repeats"]
    assert Schema(load_schema("report")).violations(doc) == []


def test_the_schema_finds_a_key_it_does_not_name(qa: Path) -> None:
    doc = json.loads(smevals("report", "qa", "--format", "json", cwd=qa.parent).out)
    doc["evals"][0]["rows"][0]["scroe"] = 1.0
    del doc["suite"][0]["pass_rate_ci"]
    assert [(v.slashed, v.message) for v in Schema(load_schema("report")).violations(doc)] == [
        ("evals/0/rows/0", "Additional properties are not allowed ('scroe' was unexpected)"),
        ("suite/0", "'pass_rate_ci' is a required property")]
