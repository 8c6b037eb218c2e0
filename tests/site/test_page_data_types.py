"""The page data types of the site (site/pagedata.py) name the keys site.schema.json names,
and the site index and every Eval and tag page of a built site match that schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from smevals.schemas import Schema, load_schema
from smevals.site import jsdata, pagedata
from tests.helpers.typeddicts import key_differences
from tests.helpers.web.site import Sites

DEFS = ("$defs",)
# (path to an object schema in site.schema.json, the TypedDict of that object)
PAIRS: list[tuple[tuple[str, ...], Any]] = [
    ((*DEFS, "site"), pagedata.SiteIndex),
    ((*DEFS, "eval_summary"), pagedata.EvalSummary),
    ((*DEFS, "eval_summary", "properties", "best", "anyOf", "0"), pagedata.SiteBest),
    ((*DEFS, "eval"), pagedata.EvalPage),
    ((*DEFS, "eval", "properties", "grader"), pagedata.PageGrader),
    ((*DEFS, "eval", "properties", "tasks", "items"), pagedata.TaskEntry),
    ((*DEFS, "eval", "properties", "tags", "items"), pagedata.TagFacet),
    ((*DEFS, "summary"), pagedata.EvalSummaryFigures),
    ((*DEFS, "tag"), pagedata.TagPage),
    ((*DEFS, "pooled"), pagedata.Pooled),
    ((*DEFS, "board"), pagedata.BoardEntry),
    ((*DEFS, "grid"), pagedata.Grid),
    ((*DEFS, "grid", "properties", "columns", "items"), pagedata.GridColumn),
    ((*DEFS, "cell"), pagedata.GridCell),
    ((*DEFS, "check_line"), pagedata.CheckLine),
    ((*DEFS, "check_cell"), pagedata.CheckCell),
]


def node(path: tuple[str, ...]) -> dict[str, Any]:
    found: Any = load_schema("site")
    for step in path:
        found = found[int(step)] if isinstance(found, list) else found[step]
    out: dict[str, Any] = found
    return out


@pytest.mark.parametrize(("path", "typed"), PAIRS,
                         ids=[".".join(p[1:]) for p, _ in PAIRS])
def test_each_type_names_the_keys_of_its_schema(path: tuple[str, ...], typed: Any) -> None:
    assert key_differences(node(path), typed) == []


def test_every_type_is_held_to_the_schema() -> None:
    assert {typed.__name__ for _path, typed in PAIRS} == set(pagedata.__all__) - {"PageView"}


def pages(site: Path) -> list[tuple[str, Any]]:
    """(key, document) of the site index and each Eval's index and tag pages."""
    data = site / "data"
    paths = [data / "index.js", *data.glob("*/index.js"), *data.glob("*/tags/*.js")]
    return [jsdata.decode(path.read_bytes()) for path in sorted(paths)]


def test_the_built_pages_match_the_schema(sites: Sites) -> None:
    found = pages(sites.site)
    kinds = sorted(doc["kind"] for _key, doc in found)
    assert kinds.count("site") == 1 and kinds.count("eval") == 2 and "tag" in kinds
    schema = Schema(load_schema("site"))
    assert {key: schema.violations(doc) for key, doc in found} == {key: [] for key, _ in found}


def test_the_schema_finds_a_key_it_does_not_name(sites: Sites) -> None:
    (doc,) = [doc for key, doc in pages(sites.site) if key == "qa/index"]
    doc["leaderboard"][0]["tasks"] = []
    (found,) = Schema(load_schema("site")).violations(doc)
    assert found.keyword == "oneOf"
    assert "'tasks' was unexpected" in str([v.message for v in found.context])
