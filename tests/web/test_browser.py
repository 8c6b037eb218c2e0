"""The web report in headless Chromium: the static site from file:// and the live site from
`serve`, clicked through from the leaderboard to a task and a Run; hostile output runs no
script; a Run that lands while the page is open appears without a reload."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from smevals.commands.site import SiteOptions, make_server
from smevals.site import jsdata
from smevals.site.build import ASSETS, asset, write_index
from smevals.site.data import eval_index, eval_summary
from tests.helpers import make_eval, run_cli
from tests.report.builder import make_qa, state1, state3
from tests.web.conftest import ARTIFACTS, Sites, Watched, start
from tests.web.hostile import OUTPUT_MARK
from tests.web.pages import wait_until
from tests.web.synthetic import big_eval

BOARD_ROWS = "table.leaderboard tbody tr"


def hostile_run(sites: Sites) -> str:
    return next((sites.site / "data" / "hostile" / "runs").glob("*.js")).stem


def models(page: Any) -> list[str]:
    return page.locator(f"{BOARD_ROWS} td:nth-child(2)").all_inner_texts()


def click_through(w: Watched, url: str, prefix: str, diff: bool) -> None:
    """Index -> Eval -> tag facet -> all -> task -> Run -> Eval (-> diff), checking each page."""
    page = w.page
    page.goto(url)
    page.locator("a.evalcard", has=page.locator("h2", has_text=re.compile("^qa$"))).click()
    page.wait_for_selector(BOARD_ROWS)
    # tiny's Grade has no score: the leaderboard ranks by pass rate
    assert models(page) == ["huge", "medium", "small", "small", "large", "tiny"]
    assert page.locator("table.grid td.flaky").count() == 1
    w.shot(f"{prefix}-eval")

    page.locator("a.facet", has_text="hat").click()
    page.wait_for_url(re.compile(r"#/qa/tag/hat$"))
    wait_until(page, "document.querySelectorAll('table.leaderboard tbody tr').length === 1")
    assert models(page) == ["medium"]
    assert "tagged “hat”" in page.locator("p.note").inner_text()
    w.shot(f"{prefix}-tag")
    page.locator("a.facet", has_text="all").click()
    wait_until(page, "document.querySelectorAll('table.leaderboard tbody tr').length === 6")

    page.locator("table.grid th a", has_text="beta").click()
    page.wait_for_selector(".columns .column")
    columns = page.locator(".column h3").all_inner_texts()
    assert columns == ["small alt", "small default", "large default", "tiny default"]
    assert "runner failed" in page.locator(".column").nth(3).inner_text()
    w.shot(f"{prefix}-task")

    page.locator(".column").nth(1).get_by_role("link", name="Open Run →").first.click()
    page.wait_for_selector("table.checks")
    assert page.locator("pre.output").inner_text() == "small answers beta (sample 0)\n"
    assert page.locator("table.checks").first.locator("td strong").all_inner_texts() == ["contains"]
    assert page.locator(".history > details").count() == 2     # graded by two grader versions
    assert "current version" in page.locator(".history > details").first.inner_text()
    w.shot(f"{prefix}-run")

    page.locator("#crumbs a", has_text="qa").click()
    page.wait_for_selector(BOARD_ROWS)
    if diff:
        page.get_by_role("link", name="Diff between revisions →").click()
        page.wait_for_selector("text=Flips")
        # (the flips' table by its class: a Grader and evidence table now comes before it)
        flips = page.locator("table.flips tbody tr td:first-child")
        assert flips.all_inner_texts() == ["beta", "gamma"]
        w.shot(f"{prefix}-diff")
    w.clean()


def test_static_site_from_file_url(sites: Sites, open_page) -> None:
    w = open_page(sites.index)
    click_through(w, sites.index, "static", diff=True)
    w.page.goto(sites.index + "#/")
    w.page.wait_for_selector("a.evalcard")
    assert w.page.locator("a.evalcard h2").all_inner_texts() == ["hostile", "qa"]
    w.shot("static-index")
    w.clean()


def test_served_site(served, open_page) -> None:
    w = open_page(served.url)
    click_through(w, served.url, "served", diff=False)
    assert w.page.locator("#live").is_visible()


def check_hostile_run(w: Watched) -> None:
    page = w.page
    page.wait_for_selector("img.artifact")
    assert page.locator("pre.output").inner_text().startswith(OUTPUT_MARK)
    assert "<script>window.PWNED='prompt'</script>" in page.locator("pre.prompt").inner_text()
    wait_until(page, "[...document.querySelectorAll('#s-artifacts img.artifact')]"
                           ".every((i) => i.complete && i.naturalWidth > 0)")
    names = page.locator("#s-artifacts").locator(".k-svg code, .k-image code").all_inner_texts()
    assert sorted(names) == ["dot.png", "evil.svg", "made.svg"]
    assert page.locator("main svg").count() == 0          # no SVG was put inline
    assert 'onerror="window.PWNED=4"' in page.locator("table.checks").first.inner_text()
    link = page.locator("#s-artifacts .k-link").inner_text()
    assert "symlink → /etc/passwd (not followed)" in link
    page.wait_for_timeout(300)
    w.clean()


def test_the_hostile_payloads_are_live(sites: Sites, open_page) -> None:
    """Control: the same output and SVG put into a page as HTML do run script, so the tests
    below that see no script run are not vacuous."""
    svg = next((sites.hostile / "results" / "runs").rglob("evil.svg")).read_text()
    w = open_page("about:")
    w.page.set_content(f"<html><body>{OUTPUT_MARK}{svg}</body></html>")
    w.page.wait_for_timeout(200)
    assert w.page.evaluate("window.PWNED") in ("output", "svg", "svg-script")
    assert w.dialogs


@pytest.mark.parametrize("where", ["static", "served"])
def test_hostile_run_runs_no_script(where: str, sites: Sites, served, open_page) -> None:
    base = sites.index if where == "static" else served.url
    w = open_page(base)
    w.page.goto(f"{base}#/hostile/run/{hostile_run(sites)}")
    check_hostile_run(w)
    w.shot(f"{where}-hostile-run")
    w.page.goto(f"{base}#/hostile")
    w.page.wait_for_selector("table.grid")
    assert w.page.locator("p.lead").inner_text() == "<img src=x onerror=alert(9)>"
    assert w.page.locator("table.grid th .model").all_inner_texts() == ["<i>evil</i>"]
    w.shot(f"{where}-hostile-eval")
    w.clean()


@pytest.mark.parametrize("where", ["static", "served"])
def test_opening_an_artifact_directly_runs_no_script(where: str, sites: Sites, served,
                                                     open_page) -> None:
    base = sites.index if where == "static" else served.url
    w = open_page(base)
    w.page.goto(f"{base}#/hostile/run/{hostile_run(sites)}")
    w.page.wait_for_selector("img.artifact")
    hrefs = w.page.eval_on_selector_all("#s-artifacts a[download]", "els => els.map(e => e.href)")
    active = [h for h in hrefs if re.search(r"(svg|html)(\.txt)?$", h)]
    assert len(active) == 3                             # evil.svg, page.html, made.svg
    for href in active:
        w.page.goto(href)
        w.page.wait_for_timeout(150)
        assert w.page.evaluate("typeof window.PWNED") == "undefined", href
    assert w.dialogs == []


def test_the_eval_page_of_10000_runs(tmp_path: Path, open_page) -> None:
    """The Eval page reads one small file, whatever the number of Runs, and makes no element
    per Run. (The time it takes is written to the artifacts, not asserted: about 0.3 s.)"""
    site = tmp_path / "site"
    loaded = big_eval(tmp_path)
    for name in ASSETS:
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_bytes(asset(name))
    (site / "data" / "big").mkdir(parents=True)
    (site / "data" / "big" / "index.js").write_bytes(jsdata.encode("big/index",
                                                                   eval_index(loaded)))
    write_index(site, [eval_summary(loaded)], loaded.generated)
    w = open_page((site / "index.html").as_uri())
    started = time.monotonic()
    w.page.goto((site / "index.html").as_uri() + "#/big")
    w.page.wait_for_selector("table.grid td.cell")
    seconds = time.monotonic() - started
    assert w.page.locator("table.grid td.cell").count() == 1000
    assert w.page.locator(BOARD_ROWS).count() == 10
    assert w.page.evaluate("document.getElementsByTagName('*').length") < 6000
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "timing-10000-runs.txt").write_text(f"Eval page of 10,000 Runs: {seconds:.3f} s\n")
    w.shot("static-eval-10000-runs")
    w.clean()


def test_a_missing_page_says_so(sites: Sites, open_page) -> None:
    w = open_page(sites.index)
    w.page.goto(sites.index + "#/qa/run/20990101T000000Z-000000000000")
    w.page.wait_for_selector("text=Not found")
    assert "not in the site" in w.page.locator("main").inner_text()
    w.errors.clear()          # the missing data file was reported by the browser
    for crafted in ("#/qa/task/..%2F..%2Findex", "#/..", "#/qa/run/%2e%2e"):
        w.page.goto(sites.index + "#/")
        w.page.wait_for_selector("a.evalcard")
        w.page.goto(sites.index + crafted)
        w.page.wait_for_selector("text=Not found")
    w.clean()                 # no data file was even asked for


def test_a_run_that_lands_appears_without_a_reload(tmp_path: Path, open_page) -> None:
    qa = make_qa(tmp_path / "qa")
    builder = state1(qa)
    server = start(make_server(SiteOptions((str(qa),)), "127.0.0.1", 0, poll_seconds=0.3,
                               check_every=0.1))
    try:
        w = open_page(server.url)
        w.page.goto(server.url + "#/qa")
        w.page.wait_for_selector(BOARD_ROWS)
        assert "huge" not in models(w.page)
        state3(builder)                        # new Runs and Grades: model "huge", task epsilon
        # the server notices within a poll (0.3 s) and reads the store again; a loaded
        # machine (two test workers and Chromium on 2 cores) has made that take over 5 s
        wait_until(w.page, "[...document.querySelectorAll('table.leaderboard tbody tr')]"
                           ".some((r) => r.innerText.includes('huge'))", seconds=20)
        assert w.page.locator("table.grid th a", has_text="epsilon").count() == 1
        w.shot("served-live-update")
        w.clean()
    finally:
        server.shutdown()
        server.server_close()


def test_the_run_page_shows_the_labels(tmp_path: Path, open_page) -> None:
    make_eval(tmp_path / "ev", tasks={"one": "prompt: hello one\n"})
    assert run_cli("run", "ev", "-g", cwd=tmp_path).code == 0
    [run_json] = (tmp_path / "ev" / "results" / "runs").rglob("run.json")
    run_id = run_json.parent.name
    assert run_cli("label", run_id, "fail", "ev", "--by", "Ada", "--note",
                   "<img src=x onerror=window.PWNED=1>", cwd=tmp_path).code == 0
    assert run_cli("build", "ev", "-o", "site", cwd=tmp_path).code == 0
    w = open_page((tmp_path / "site" / "index.html").as_uri())
    w.page.goto((tmp_path / "site" / "index.html").as_uri() + f"#/ev/run/{run_id}")
    w.page.wait_for_selector("#s-labels")
    text = w.page.locator("#s-labels").inner_text()
    assert "fail" in text and "Ada" in text and "counts" in text
    assert "<img src=x onerror=window.PWNED=1>" in text      # shown as text, never as HTML
    assert w.page.evaluate("typeof window.PWNED") == "undefined"
    w.clean()
