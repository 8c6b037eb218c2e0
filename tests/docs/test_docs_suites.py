"""The manual's list of shipped suites is the list of folders in suites/ (so that a count or
a table in the docs cannot go stale when a suite is added)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_getting_started_lists_every_shipped_suite() -> None:
    page = (ROOT / "docs" / "getting-started.md").read_text(encoding="utf-8")
    table = page.split("## The shipped suites", 1)[1].split("\n\n| suite |", 1)[1]
    listed = re.findall(r"^\| `([\w-]+)` \|", table.split("\n\n", 1)[0], re.M)
    shipped = sorted(p.name for p in (ROOT / "suites").iterdir() if (p / "eval.yaml").is_file())
    assert sorted(listed) == shipped
