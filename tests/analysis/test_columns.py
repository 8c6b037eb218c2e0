"""docs/analysis.md's column tables are the tables' columns, in order, with their types;
and a column of authors' values gets one type (tables.typed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from smevals.analysis import tables

PAGE = Path(__file__).resolve().parents[2] / "docs" / "analysis.md"
KINDS = {"text": tables.STR, "integer": tables.INT, "number": tables.FLOAT,
         "boolean": tables.BOOL, "time": tables.TIME}


def documented(section: str) -> list[tuple[str, str]]:
    """(column, type) of the table under `### section`, a cell naming several columns
    giving each the cell's type."""
    text = PAGE.read_text().split(f"\n### {section}\n", 1)[1].split("\n#", 1)[0]
    out = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 3:
            continue
        out += [(name, cells[1]) for name in re.findall(r"`([^`]+)`", cells[0])]
    return out


@pytest.mark.parametrize(("section", "columns"), [
    ("runs", tables.RUN_COLUMNS), ("checks", tables.CHECK_COLUMNS),
    ("history", tables.HISTORY_COLUMNS)])
def test_the_documented_columns_are_the_tables(section: str,
                                               columns: tuple[tuple[str, str], ...]) -> None:
    found = documented(section)
    if section == "runs":
        assert found[-2:] == [("metric.KEY", "any"), ("task.KEY", "any")]
        found = found[:-2]
    if section == "checks":
        assert [name for name, _kind in found[:8]] == [n for n, _k in tables.RUN_COLUMNS[:6]] \
            + ["grade_id", "grader_version"]
        found = [(n, dict(tables.RUN_COLUMNS)[n]) for n, _k in found[:8]] + \
            [(n, KINDS[k]) for n, k in found[8:]]
        assert found == list(columns)
        return
    assert [(name, KINDS[kind]) for name, kind in found] == list(columns)


@pytest.mark.parametrize(("values", "kind", "made"), [
    ([True, None, False], tables.BOOL, [True, None, False]),
    ([1, None, 2**63 - 1], tables.INT, [1, None, 2**63 - 1]),
    ([1, 2**63], tables.STR, ["1", str(2**63)]),
    ([1, 2.5, None], tables.FLOAT, [1.0, 2.5, None]),
    (["a", None], tables.STR, ["a", None]),
    ([1, "a", True, [1], {"b": 2}], tables.STR, ["1", "a", "true", "[1]", '{"b":2}']),
    ([None, None], tables.INT, [None, None]),
])
def test_authors_values_get_one_type(values: list[object], kind: str,
                                     made: list[object]) -> None:
    assert tables.typed(values) == (kind, made)
