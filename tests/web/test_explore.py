"""Exploring the results in Chromium: the Eval page's filters, search and Run list, with
their state in the address (a reload keeps it); the grid coloured by one Check and the
Checks table; the Run page's timelines (a tool error, a long result folded, the raw JSON
one click away), a hostile transcript shown as text, and the workspace diff."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from smevals.commands.site import SiteOptions, make_server
from smevals.site.serve import SiteServer
from tests.helpers import make_eval, run_cli
from tests.web.agentish import AgentSite, build_agentish
from tests.web.conftest import Sites, Watched, start
from tests.web.pages import STATUS, fetch, listed, wait_until

LOADED = f"document.querySelector('.explore-status') !== null && {STATUS}.includes('match')"


@pytest.fixture(scope="module")
def agentish(tmp_path_factory: pytest.TempPathFactory) -> AgentSite:
    return build_agentish(tmp_path_factory.mktemp("agentish"))


@pytest.fixture(scope="module")
def agentish_served(agentish: AgentSite) -> Iterator[SiteServer]:
    server = start(make_server(SiteOptions((str(agentish.ev),)), "127.0.0.1", 0))
    yield server
    server.shutdown()
    server.server_close()


def shown_tasks(page: Any) -> list[str]:
    return page.locator("table.grid tbody tr:not([hidden]) th a").all_inner_texts()


def goto(w: Watched, url: str, matching: bool = True) -> None:
    w.page.goto(url)
    w.page.wait_for_selector("table.grid")
    if matching:
        wait_until(w.page, f"{STATUS}.includes('match')")


def cell(page: Any, task: str, column: int) -> Any:
    return page.locator(f'table.grid tr[data-task="{task}"] td[data-col="{column}"]')


def test_a_filter_in_the_address_survives_a_reload(agentish: AgentSite, open_page) -> None:
    w = open_page(agentish.index)
    goto(w, agentish.index + "#/agentish?f=fail")
    for _ in range(2):
        assert shown_tasks(w.page) == ["alpha", "beta"]
        assert sorted(listed(w.page)) == [("alpha", "bad-1", "fail")] * 2 + [
            ("beta", "bad-1", "fail")] * 2 + [("beta", "good-1", "fail")]
        assert w.page.locator("button.f-fail").get_attribute("aria-pressed") == "true"
        assert w.page.evaluate(STATUS).startswith("5 Runs of 16 match (2 tasks).")
        w.page.reload()
        wait_until(w.page, LOADED)
    w.shot("explore-failures")
    w.clean()


CASES = [
    ("f=fail", ["alpha", "beta"], 5),
    ("f=error", ["delta", "gamma"], 6),          # a judge with no verdict; a runner that failed
    ("f=flaky", ["beta"], 2),
    ("check=tone", ["alpha", "beta", "delta"], 8),     # failed or no verdict
    ("check=fixed", ["beta"], 1),
    ("f=fail&check=tone", ["alpha", "beta"], 4),
    ("q=penguin", ["delta"], 4),                 # found in the outputs
    ("q=GAMMA", ["gamma"], 4),                   # a Task's name, in any case
    ("q=no%20such%20text", [], 0),
    ("f=fail,nonsense&check=no-such-check&color=no-such-check&x=1", ["alpha", "beta"], 5),
]


def test_each_filter_shows_its_rows(agentish: AgentSite, open_page) -> None:
    w = open_page(agentish.index)
    for query, tasks, runs in CASES:
        goto(w, agentish.index + f"#/agentish?{query}")
        assert sorted(shown_tasks(w.page)) == tasks, query
        assert len(listed(w.page)) == runs, query
        if not runs:
            assert w.page.locator(".none-match").inner_text() == "No Run matches."
    # a cell without matching Runs is dimmed: on beta only good-1 (column 0) is flaky
    goto(w, agentish.index + "#/agentish?f=flaky")
    assert "dim" not in cell(w.page, "beta", 0).get_attribute("class")
    assert "dim" in cell(w.page, "beta", 1).get_attribute("class")
    # the Eval has no diff: no "flipped" filter; no Grade marks tampering: no such filter
    assert w.page.locator("button.f-flipped").count() == 0
    assert w.page.locator("button.f-tampering").count() == 0
    w.clean()


def test_the_search_finds_a_task_by_its_output_and_clicks_write_the_address(
        agentish: AgentSite, open_page) -> None:
    w = open_page(agentish.index)
    page = w.page
    goto(w, agentish.index + "#/agentish", matching=False)
    assert page.locator("table.runs").count() == 0          # nothing loaded yet
    page.locator("button.f-fail").click()
    wait_until(page, "location.hash === '#/agentish?f=fail'")
    page.locator("input.search").fill("zebra")
    wait_until(page, "location.hash === '#/agentish?f=fail&q=zebra'")
    wait_until(page, "document.querySelectorAll('table.runs tbody tr').length === 1")
    assert listed(page) == [("beta", "good-1", "fail")]
    assert page.locator("table.runs mark").inner_text() == "zebra"
    assert "the whole of each Run's output" in page.evaluate(STATUS)
    page.reload()
    wait_until(page, "document.querySelectorAll('table.runs tbody tr').length === 1")
    assert page.locator("input.search").input_value() == "zebra"
    assert shown_tasks(page) == ["beta"]
    w.shot("explore-search")
    page.locator("button.clear").click()
    wait_until(page, "location.hash === '#/agentish'")
    assert shown_tasks(page) == ["alpha", "beta", "delta", "gamma"]
    page.locator("button.listall").click()
    wait_until(page, "location.hash === '#/agentish?list=1'")
    assert len(listed(page)) == 16
    # the Run list leads to the Run
    page.locator("table.runs tbody tr", has_text="zebra").locator("a .badge").click()
    page.wait_for_selector("pre.output")
    assert page.locator("pre.output").inner_text() == "gave up on the zebra\n"
    w.clean()


def test_the_grid_is_coloured_by_one_check(agentish: AgentSite, open_page) -> None:
    w = open_page(agentish.index)
    page = w.page
    goto(w, agentish.index + "#/agentish", matching=False)
    beta_good = cell(page, "beta", 0)
    assert (beta_good.inner_text(), "pr5" in beta_good.get_attribute("class")) == ("1/2◐", True)
    page.locator("select[name=color]").select_option("tone")
    wait_until(page, "location.hash === '#/agentish?color=tone'")
    wait_until(page, "document.querySelector('td.bycheck') !== null")
    assert (beta_good.inner_text(), "pr10" in beta_good.get_attribute("class")) == ("2/2", True)
    alpha_bad = cell(page, "alpha", 1)
    assert (alpha_bad.inner_text(), "pr0" in alpha_bad.get_attribute("class")) == ("0/2", True)
    assert cell(page, "delta", 0).inner_text() == "–"         # no verdict: the judge failed
    assert "Check “tone” passed in" in page.locator(".legend").inner_text()
    assert page.locator("table.runs").count() == 0             # a colour alone lists no Run
    w.shot("explore-colour")
    # the Checks table: its figures, and a button that colours the grid by its Check
    row = page.locator('table.checktable tr[data-check="tone"]')
    assert row.locator("td").all_inner_texts() == ["100% (6/6), 2 errors", "0% (0/4), 2 errors"]
    page.locator('table.checktable tr[data-check="fixed"] button').click()
    wait_until(page, "location.hash === '#/agentish?color=fixed'")
    assert beta_good.inner_text() == "1/2"
    assert alpha_bad.inner_text() == "2/2"
    page.reload()
    wait_until(page, "document.querySelector('td.bycheck') !== null")
    assert page.locator("select[name=color]").input_value() == "fixed"
    page.locator("select[name=color]").select_option("")
    wait_until(page, "location.hash === '#/agentish'")
    assert beta_good.inner_text() == "1/2◐" and "flaky" in beta_good.get_attribute("class")
    assert "Pass rate:" in page.locator(".legend").inner_text()
    w.clean()


def test_flipped_in_the_diff_and_a_tag_keep_the_filters(sites: Sites, open_page) -> None:
    w = open_page(sites.index)
    page = w.page
    page.goto(sites.index + "#/qa/diff")
    page.get_by_role("link", name="Their Runs on the Eval page (filter: flipped) →").click()
    wait_until(page, "location.hash === '#/qa?f=flipped&list=1'")
    wait_until(page, LOADED)
    assert shown_tasks(page) == ["beta", "gamma"]         # the diff page's flips
    # qa's grader has one Check: no Checks table, no Check filter or colour (as in report)
    assert page.locator("#s-checks, select[name=check], select[name=color]").count() == 0
    assert {task for task, _model, _result in listed(page)} == {"beta", "gamma"}
    goto(w, sites.index + "#/qa?f=fail")
    page.locator("a.facet", has_text="hat").click()
    wait_until(page, "location.hash === '#/qa/tag/hat?f=fail'")
    wait_until(page, LOADED)
    assert all(result == "fail" for _t, _m, result in listed(page))
    w.clean()


def test_the_timeline_shows_a_tool_error_and_folds_a_long_result(
        agentish: AgentSite, open_page) -> None:
    w = open_page(agentish.index)
    page = w.page
    page.goto(agentish.index + f"#/agentish/run/{agentish.run_id('alpha', 'good-1', 0)}")
    page.wait_for_selector("#s-transcript ol.timeline")
    entries = page.locator("#s-transcript ol.timeline > li")
    assert [e.locator(".tl-kind").inner_text() for e in entries.all()] == [
        "USER", "ASSISTANT", "TOOL CALL", "TOOL ERROR", "TOOL CALL", "TOOL RESULT", "ASSISTANT"]
    bad = page.locator("#s-transcript li.tl-bad")
    assert bad.count() == 1 and "No such file: parser.py" in bad.inner_text()
    assert '"path": "parser.py"' in entries.nth(2).locator("pre.args").inner_text()
    long = entries.nth(5)
    full = long.locator("details.more > pre")
    assert long.locator("pre.head").is_visible() and not full.is_visible()
    summary = long.locator("details.more summary")
    assert summary.inner_text() == "Show all (1,491 characters, 400 lines)"
    summary.click()
    assert full.is_visible() and not long.locator("pre.head").is_visible()
    assert full.inner_text().split("\n")[-1] == "400"
    raw = entries.nth(0).locator("details.raw")
    assert not raw.locator("pre").is_visible()
    raw.locator("summary").click()
    assert '"role": "user"' in raw.locator("pre").inner_text()
    # the judge's calls of the Grade that counts
    judge = page.locator("#s-judge-tone ol.timeline > li")
    assert [e.locator(".tl-kind").inner_text() for e in judge.all()] == [
        "SYSTEM", "USER", "ASSISTANT", "EVENT"]
    # the workspace diff, coloured by line
    diff = page.locator("#s-workspace-diff pre.diff")
    counts = {cls: diff.locator(f"span.{cls}").count()
              for cls in ("d-file", "d-hunk", "d-add", "d-del", "d-ctx")}
    assert counts == {"d-file": 3, "d-hunk": 1, "d-add": 1, "d-del": 2, "d-ctx": 2}
    assert diff.locator("span.d-del").nth(1).inner_text() == "--- not a header: a removed line\n"
    summary_line = "1 file changed · +1 −2 lines · raw file"
    assert summary_line in page.locator("#s-workspace-diff").inner_text()
    href = page.locator("#s-workspace-diff a", has_text="raw file").get_attribute("href")
    assert href.endswith("/workspace.diff.txt")
    w.shot("explore-timeline")
    w.clean()


def test_a_hostile_transcript_is_shown_as_text_and_capped(agentish: AgentSite, open_page) -> None:
    w = open_page(agentish.index)
    page = w.page
    page.goto(agentish.index + f"#/agentish/run/{agentish.run_id('alpha', 'bad-1', 0)}")
    page.wait_for_selector("#s-transcript ol.timeline")
    entries = page.locator("#s-transcript ol.timeline > li")
    assert entries.count() == 6
    assert entries.nth(0).locator("pre").first.inner_text() == (
        '<script>window.PWNED = "transcript"; alert(1)</script>'
        '<img src=x onerror="window.PWNED=2">')
    assert page.locator("#s-transcript li.tl-bad").count() == 2       # the two bad lines
    assert entries.nth(3).locator(".tl-name").inner_text() == "<b>bash</b>"
    big = page.evaluate("document.querySelectorAll('#s-transcript li')[4]"
                        ".querySelector('details.more > pre').textContent.length")
    assert big == 32 * 1024 + len("\n[... cut]")
    assert "<script>window.PWNED=3</script>" in entries.nth(5).inner_text()
    assert page.locator("#s-transcript script, #s-transcript img, #s-transcript b").count() == 0
    page.wait_for_timeout(200)
    w.clean()


def test_the_timeline_from_serve_links_the_raw_file(
        agentish: AgentSite, agentish_served: SiteServer, open_page) -> None:
    w = open_page(agentish_served.url)
    page = w.page
    page.goto(agentish_served.url + f"#/agentish/run/{agentish.run_id('alpha', 'good-1', 1)}")
    page.wait_for_selector("#s-transcript ol.timeline")
    assert page.locator("#s-transcript ol.timeline > li").count() == 7
    href = page.locator("#s-transcript a", has_text="raw file").get_attribute("href")
    status, headers, body = fetch(agentish_served, "/" + href)
    assert (status, headers["content-type"]) == (200, "text/plain; charset=utf-8")
    assert body.startswith(b'{"type": "message", "role": "user"')
    page.goto(agentish_served.url + "#/agentish?f=error")
    wait_until(page, LOADED)
    assert sorted(shown_tasks(page)) == ["delta", "gamma"]
    w.clean()


def test_hostile_outputs_and_check_names_stay_text_in_the_filters(sites: Sites, open_page) -> None:
    w = open_page(sites.index)
    page = w.page
    goto(w, sites.index + "#/hostile?q=%3Cscript%3E&color=.%2Fevil-check")
    assert listed(page) == [("attack", "<i>evil</i>", "pass")]
    assert page.locator("table.runs mark").inner_text() == "<script>"
    options = page.locator("select[name=color] option").all_inner_texts()
    assert options == ["pass rate", "./evil-check", "contains"]
    assert page.locator("select[name=color]").input_value() == "./evil-check"
    assert page.locator("main i, main script").count() == 0
    page.wait_for_timeout(200)
    w.clean()


def test_a_run_that_lands_joins_the_filtered_list_live(tmp_path: Path, open_page) -> None:
    ev = make_eval(tmp_path / "ev", graders={"default": "checks:\n  - checker: contains\n"
                                                        "    value: one\n"})
    assert run_cli("run", str(ev), "-g").code == 1                  # task two fails
    server = start(make_server(SiteOptions((str(ev),)), "127.0.0.1", 0, poll_seconds=0.3,
                               check_every=0.1))
    try:
        w = open_page(server.url)
        goto(w, server.url + "#/ev?f=fail&q=says")
        assert listed(w.page) == [("two", "m1", "fail")]
        assert run_cli("run", str(ev), "-m", "m2", "-g").code == 1
        wait_until(w.page, "document.querySelectorAll('table.runs tbody tr').length === 2")
        assert sorted(listed(w.page)) == [("two", "m1", "fail"), ("two", "m2", "fail")]
        assert w.page.evaluate("location.hash") == "#/ev?f=fail&q=says"
        assert w.page.locator("input.search").input_value() == "says"
        w.clean()
    finally:
        server.shutdown()
        server.server_close()


def test_a_task_opened_from_a_filtered_grid_shows_the_matching_runs(
        agentish: AgentSite, open_page) -> None:
    w = open_page(agentish.index)
    page = w.page
    goto(w, agentish.index + "#/agentish?f=fail")
    page.locator('table.grid tr[data-task="beta"] th a').click()
    wait_until(page, "location.hash === '#/agentish/task/beta?f=fail'")
    page.wait_for_selector("p.explore-task >> text=Showing")
    visible = ".column .run:not([hidden])"
    assert page.locator(visible).count() == 3             # of 4: good-1's pass is hidden
    assert page.locator("p.explore-task").inner_text() == (
        "Showing the 3 Runs of this task that match the filters (failures); "
        "show all its Runs.")
    w.shot("explore-task")
    page.get_by_role("link", name="show all its Runs").click()
    wait_until(page, "location.hash === '#/agentish/task/beta'")
    page.wait_for_selector(".column .run")
    assert page.locator(visible).count() == 4
    assert page.locator("p.explore-task").count() == 0
    # a colour alone does not follow the links to the Task pages
    goto(w, agentish.index + "#/agentish?color=tone", matching=False)
    wait_until(page, "document.querySelector('td.bycheck') !== null")
    href = page.locator('table.grid tr[data-task="beta"] th a').get_attribute("href")
    assert href == "#/agentish/task/beta"
    w.clean()
