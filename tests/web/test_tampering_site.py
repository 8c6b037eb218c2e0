"""Tampering on the web report (issue 34 item 3): the Eval page counts the Runs whose Grade
marks tampering and filters them (the filter kept in the address), the Run page lists each
mark; the page data carry them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from smevals.site import jsdata
from tests.helpers import make_eval, run_cli
from tests.web.pages import wait_until

AGENT = """#!/bin/sh
printf 'def is_leap(year):\\n    return year %% 4 == 0 and ' > leap.py
printf '(year %% 100 != 0 or year %% 400 == 0)\\n' >> leap.py
case "$SMEVALS_TASK" in
  machinery) printf 'import pytest\\n' > conftest.py ;;
  protected) printf 'edited <script>window.PWNED=1</script>\\n' >> README.md ;;
esac
echo done
"""
HIDDEN = "from leap import is_leap\n\n\ndef test_plain():\n    assert is_leap(2024)\n"
TASK = "prompt: write is_leap\nworkspace: start\ngrading:\n  files: hidden\n"
STATUS = "document.querySelector('.explore-status').textContent"


@dataclass
class Site:
    ev: Path
    site: Path

    @property
    def index(self) -> str:
        return (self.site / "index.html").as_uri()

    def data(self, key: str) -> Any:
        return jsdata.decode((self.site / "data" / f"{key}.js").read_bytes())[1]


@pytest.fixture(scope="module")
def tampered(tmp_path_factory: pytest.TempPathFactory) -> Site:
    root = tmp_path_factory.mktemp("tampered")
    ev = make_eval(root / "tampered", name="tampered",
                   tasks={"machinery": TASK, "protected": TASK + "  protect: [README.md]\n",
                          "clean": TASK},
                   configs={"default": "runner: ./agent.sh\nmodel: m1\n"},
                   graders={"default": "checks:\n  - checker: command\n"
                                       "    command: python -m pytest -q test_leap.py\n"},
                   files={"configs/agent.sh": AGENT, "start/leap.py": "def is_leap(y): ...\n",
                          "start/README.md": "# leap\n", "hidden/test_leap.py": HIDDEN})
    res = run_cli("run", str(ev), "-g")
    assert res.code == 1, res.both                 # the conftest is refused
    built = run_cli("build", "-o", str(root / "site"), str(ev))
    assert built.code == 0, built.both
    return Site(ev, root / "site")


def test_the_page_data_carry_the_marks(tampered: Site) -> None:
    index = tampered.data("tampered/index")
    assert index["summary"]["tampering"] == {"runs": 2,
                                             "kinds": {"conftest": 1, "protected": 1}}
    lines = {r["task"]: r for r in tampered.data("tampered/explore")["runs"]}
    assert {task: r["tampering"] for task, r in lines.items()} == \
        {"machinery": 1, "protected": 1, "clean": 0}
    run = tampered.data(f"tampered/runs/{lines['protected']['id']}")
    (grade,) = run["grades"]
    assert (grade["tampering"], grade["tampering_cut"]) == \
        ([{"path": "README.md", "kind": "protected"}], 0)


def test_the_eval_page_counts_and_filters_the_runs_with_tampering(tampered: Site,
                                                                  open_page) -> None:
    w = open_page(tampered.index)
    page = w.page
    page.goto(tampered.index + "#/tampered")
    page.wait_for_selector("table.grid")
    note = page.locator(".head .note.tampering")
    assert note.inner_text() == ("⚠ 2 Runs with tampering (conftest: 1, protected: 1): their "
                                 "change touched test machinery or protected paths. List them.")
    stats = dict(zip(page.locator(".stats dt").all_text_contents(),
                     page.locator(".stats dd").all_text_contents(), strict=True))
    assert stats["Tampering"] == "2 Runs"
    page.locator("button.f-tampering").click()
    wait_until(page, "location.hash === '#/tampered?f=tampering'")
    wait_until(page, f"{STATUS}.includes('match')")
    rows = page.locator("table.runs tbody tr")
    assert sorted(r.locator("td").first.inner_text() for r in rows.all()) == \
        ["machinery", "protected"]
    assert rows.first.locator(".b-tampering").inner_text() == "tampering"
    page.reload()
    wait_until(page, f"{STATUS}.includes('match')")
    assert page.locator("button.f-tampering").get_attribute("aria-pressed") == "true"
    assert page.locator("table.runs tbody tr").count() == 2
    w.shot("tampering-filter")
    note = page.locator(".head .note.tampering")
    note.get_by_role("link", name="List them").click()
    wait_until(page, "location.hash === '#/tampered?f=tampering&list=1'")
    w.clean()


def test_the_run_page_lists_each_mark(tampered: Site, open_page) -> None:
    lines = {r["task"]: r for r in tampered.data("tampered/explore")["runs"]}
    w = open_page(tampered.index)
    page = w.page
    page.goto(tampered.index + f"#/tampered/run/{lines['protected']['id']}")
    page.wait_for_selector("#s-checks")
    marks = page.locator("div.note.tampering").first
    assert marks.locator("li").all_inner_texts() == ["README.md protected"]
    assert "1 mark in its Grade" in marks.inner_text()
    assert page.evaluate("window.PWNED === undefined")
    w.shot("tampering-run")
    page.goto(tampered.index + f"#/tampered/run/{lines['clean']['id']}")
    page.wait_for_selector("#s-checks")
    assert page.locator("div.note.tampering").count() == 0
    w.clean()
