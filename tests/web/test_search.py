"""The Eval page's search covers whole outputs: `build` and `serve` make an index of every
word of each Run's output.txt (data/<eval>/search.js), so a word past the 500 characters
explore.js keeps is found (issue 41 item 4); without the index the search falls back to
the start of each output, and says so."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from smevals.commands.site import SiteOptions, make_server
from smevals.site import jsdata
from smevals.site.search import decode, encode, words_of
from tests.helpers import make_eval, run_cli
from tests.web.conftest import Watched, start
from tests.web.pages import STATUS, fetch, listed, wait_until

FILLER = " ".join(f"filler{i:03d}" for i in range(80))         # 800 characters
RUNNER = f"""#!/bin/sh
case "$SMEVALS_TASK" in
  far) echo "{FILLER} and at the very end a Platypus" ;;
  near) echo "a platypus right away" ;;
  *) echo "nothing to see" ;;
esac
"""


@dataclass
class Built:
    ev: Path
    site: Path

    @property
    def index(self) -> str:
        return (self.site / "index.html").as_uri()

    def data(self, name: str) -> Any:
        return jsdata.decode((self.site / "data" / "ev" / name).read_bytes())[1]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("search")
    ev = make_eval(root / "ev", name="ev",
                   tasks={t: f"prompt: {t}\n" for t in ("far", "near", "none")},
                   graders={"default": "checks:\n  - checker: contains\n    value: t\n"},
                   files={"configs/echo.sh": RUNNER})
    assert run_cli("run", str(ev), "-n", "2", "-g").code == 0
    site = root / "site"
    assert run_cli("build", str(ev), "-o", str(site)).code == 0
    return Built(ev, site)


def positions(index: dict[str, Any], word: str) -> list[int]:
    return decode(index["words"][word], index["runs"])


def test_the_index_holds_every_word_of_each_whole_output(built: Built) -> None:
    explore, index = built.data("explore.js"), built.data("search.js")
    runs = explore["runs"]
    assert (index["kind"], index["runs"], index["word_chars"]) == ("search", len(runs), 64)
    far = [i for i, r in enumerate(runs) if r["task"] == "far"]
    near = [i for i, r in enumerate(runs) if r["task"] == "near"]
    assert all("platypus" not in runs[i]["excerpt"].lower() for i in far)   # past 500 chars
    assert positions(index, "platypus") == sorted(far + near)
    assert positions(index, "filler079") == far
    assert positions(index, "nothing") == [i for i, r in enumerate(runs) if r["task"] == "none"]
    assert "Platypus" not in index["words"]                    # words are lower-cased


def test_the_two_forms_of_a_words_runs() -> None:
    assert encode([3, 4, 14], 100) == "3,0,9"
    dense = list(range(0, 600, 2))
    assert encode(dense, 600).startswith("~") and decode(encode(dense, 600), 600) == dense
    assert decode("3,0,9", 100) == [3, 4, 14]
    assert words_of("Héllo, WORLD_2 " + "x" * 70) == {"héllo", "world_2", "x" * 64}


def test_serve_sends_the_same_index(built: Built) -> None:
    server = start(make_server(SiteOptions((str(built.ev),)), "127.0.0.1", 0))
    try:
        status, headers, body = fetch(server, "/data/ev/search.js")
    finally:
        server.shutdown()
        server.server_close()
    assert status == 200 and headers["content-type"].startswith("text/javascript")
    key, doc = jsdata.decode(body)
    assert (key, doc) == ("ev/search", built.data("search.js"))


def search(w: Watched, base: str, query: str, count: int) -> None:
    w.page.goto(f"{base}#/ev?q={query}")
    w.page.wait_for_selector("table.grid")
    wait_until(w.page, f"document.querySelectorAll('table.runs tbody tr').length === {count}"
                       f" && {STATUS}.includes('match')")


def test_a_word_past_the_500th_character_is_found(built: Built, open_page) -> None:
    w = open_page(built.index)
    search(w, built.index, "platypus", 4)
    assert sorted(listed(w.page)) == [("far", "m1", "pass")] * 2 + [("near", "m1", "pass")] * 2
    assert "the whole of each Run's output" in w.page.evaluate(STATUS)
    far = w.page.locator("table.runs tbody tr", has_text="far").first
    assert far.locator("span.further").inner_text() == " (found further in the output)"
    near = w.page.locator("table.runs tbody tr", has_text="near").first
    assert near.locator("mark").inner_text() == "platypus"
    search(w, built.index, "PLATY%20very", 2)               # every word, within a word
    assert listed(w.page) == [("far", "m1", "pass")] * 2
    search(w, built.index, "filler079", 2)
    search(w, built.index, "platypus%20zebra", 0)
    w.shot("search-whole-outputs")
    w.clean()


def test_without_the_index_the_search_looks_at_the_start_and_says_so(
        built: Built, tmp_path: Path, open_page) -> None:
    site = tmp_path / "site"
    shutil.copytree(built.site, site)
    (site / "data" / "ev" / "search.js").unlink()
    w = open_page((site / "index.html").as_uri())
    search(w, (site / "index.html").as_uri(), "platypus", 2)
    assert listed(w.page) == [("near", "m1", "pass")] * 2
    assert "this site has no index of whole outputs" in w.page.evaluate(STATUS)
