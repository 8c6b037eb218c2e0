"""The History page: `build --history N` writes it with a diff page per commit, `serve`
makes both on request and follows HEAD. Its figures are those of `report --rev C`; a
damaged commit is left out of the lines but listed; a point opens the diff of its commit
against its parent, with the figures of `smevals diff`."""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from smevals.commands.site import SiteOptions, make_server
from smevals.site import jsdata
from smevals.site.build import asset
from smevals.site.history import SHARED_SECONDS
from tests.helpers import git as git_plain
from tests.helpers import make_eval, run_cli
from tests.report.builder import commit
from tests.web.conftest import EPOCH, Watched, start
from tests.web.historyrepo import (
    DAMAGED,
    GRADER_EDITED,
    RUNNER_EDITED,
    SUBJECTS,
    TASK_ADDED,
    HistoryRepo,
    make_history,
)
from tests.web.pages import fetch, wait_until

HOSTILE = "<img src=x onerror=window.PWNED=1>"


@dataclass
class Built:
    hist: HistoryRepo
    site: Path
    env: dict[str, str]

    @property
    def index(self) -> str:
        return (self.site / "index.html").as_uri()

    def data(self, rel: str) -> Any:
        return jsdata.decode((self.site / "data" / "qa" / rel).read_bytes())[1]

    def cli_json(self, *args: str) -> Any:
        res = run_cli(*args, "--format", "json", cwd=self.hist.repo, env=self.env)
        assert res.code == 0, res.both
        return json.loads(res.out)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("history")
    hist = make_history(root / "repo")
    env = {"SMEVALS_CACHE_DIR": str(root / "cache"), "SOURCE_DATE_EPOCH": EPOCH}
    site = root / "site"
    res = run_cli("build", "--history", "10", "-o", str(site), "qa", cwd=hist.repo, env=env)
    assert res.code == 0, res.both
    return Built(hist, site, env)


def leaderboard(built: Built, sha: str) -> dict[tuple[str, str], dict[str, Any]]:
    (ev,) = built.cli_json("report", "--rev", sha, "qa")["evals"]
    return {(g["config"], g["model"]): g for g in ev["leaderboard"]}


def expected_points(built: Built, figure: str = "pass_rate") -> dict[tuple[str, str], list[str]]:
    """(config, model) -> the commits, oldest first, with a `figure` of it (`report --rev`);
    the damaged commit is left out and the first one has no results."""
    out: dict[tuple[str, str], list[str]] = {}
    for i, sha in reversed(list(enumerate(built.hist.shas[:-1]))):
        if i == DAMAGED:
            continue
        for pair, entry in leaderboard(built, sha).items():
            if entry[figure] is not None:
                out.setdefault(pair, []).append(sha)
    return out


# --- the static build ----------------------------------------------------------------------


def test_build_writes_the_history_and_a_diff_page_per_commit(built: Built) -> None:
    doc = built.data("history.js")
    assert [c["subject"] for c in doc["commits"]] == SUBJECTS
    assert [c["sha"] for c in doc["commits"]] == built.hist.shas
    assert [c["damage"] for c in doc["commits"]] == [0, 0, 1, 0, 0, 0, 0]
    # every commit but the first has a diff page
    assert [c["diff"] for c in doc["commits"]] == [True] * 6 + [False]
    diffs = sorted(p.stem for p in (built.site / "data" / "qa" / "diffs").glob("*.js"))
    assert diffs == sorted(built.hist.shas[:-1])
    assert built.data("index.js")["history"] is True
    # the figures of each commit are those of `report --rev C --format json`
    newest = doc["commits"][0]
    board = leaderboard(built, newest["sha"])
    counted = [r for r in newest["rows"] if r["runs"]]
    assert {(r["config"], r["model"]) for r in counted} == set(board)
    # the runner edit made every other pair's Runs stale: each has a row of 0 Runs, marked
    before = {(r["config"], r["model"]) for r in doc["commits"][1]["rows"]}
    assert {(r["config"], r["model"], tuple(r["marks"]), r["pass_rate"]) for r in
            newest["rows"] if not r["runs"]} == \
        {(c, m, ("runner",), None) for c, m in before - set(board)}
    for row in counted:
        entry = board[(row["config"], row["model"])]
        for key in ("runs", "passed", "failed", "scored", "mean", "stderr", "pass_rate",
                    "pass_rate_ci"):
            assert row[key] == entry[key], (row, key)


def test_a_commit_diff_page_holds_the_diff_against_its_parent(built: Built) -> None:
    sha = built.hist.shas[GRADER_EDITED]
    parent = built.hist.shas[GRADER_EDITED + 1]
    page = built.data(f"diffs/{sha}.js")
    (entry,) = built.cli_json("diff", parent, sha, "qa")["evals"]
    assert page["diff"]["groups"] == entry["groups"]
    assert page["diff"]["flips"] == entry["flips"]
    assert (page["a"]["label"], page["b"]["label"]) == (parent[:7], sha[:7])
    assert page["a"]["commit"] == parent and page["b"]["commit"] == sha


def test_a_build_with_history_is_reproducible(built: Built, tmp_path: Path) -> None:
    """With SOURCE_DATE_EPOCH, the History page and every diff page come out byte for byte
    the same (the history is read again: the cache of commits read is dropped)."""
    env = {**built.env, "SMEVALS_CACHE_DIR": str(tmp_path / "cache")}
    res = run_cli("build", "--history", "10", "-o", str(tmp_path / "site"), "qa",
                  cwd=built.hist.repo, env=env)
    assert res.code == 0, res.both
    mine = sorted(p.relative_to(built.site) for p in (built.site / "data" / "qa").rglob("*.js")
                  if p.name == "history.js" or p.parent.name == "diffs")
    assert len(mine) == 1 + len(SUBJECTS) - 1
    for rel in mine:
        assert (tmp_path / "site" / rel).read_bytes() == (built.site / rel).read_bytes(), rel


def test_a_site_built_without_history_has_no_history_page(tmp_path: Path, built: Built) -> None:
    site = tmp_path / "site"
    res = run_cli("build", "-o", str(site), "qa", cwd=built.hist.repo, env=built.env)
    assert res.code == 0, res.both
    assert not (site / "data" / "qa" / "history.js").exists()
    assert not (site / "data" / "qa" / "diffs").exists()
    assert jsdata.decode((site / "data" / "qa" / "index.js").read_bytes())[1]["history"] is False


@pytest.mark.parametrize(("args", "message"), [
    (["--history", "0"], "--history 0: give a number of commits from 1 to 1000"),
    (["--history", "-2"], "--history -2: give a number of commits from 1 to 1000"),
    (["--history", "1001"], "--history 1001: give a number of commits from 1 to 1000"),
    (["--history", "many"], "'many' is not a valid integer"),
    (["--history", "3", "--rev", "HEAD"], "--history reads the commits up to HEAD; "
                                          "it cannot go with --rev"),
])
def test_a_bad_history_value_exits_2(built: Built, tmp_path: Path, args: list[str],
                                     message: str) -> None:
    res = run_cli("build", *args, "-o", str(tmp_path / "site"), "qa", cwd=built.hist.repo,
                  env=built.env)
    assert res.code == 2, res.both
    assert message in res.err
    assert not (tmp_path / "site").exists()


def test_history_outside_a_git_repository_exits_2(tmp_path: Path) -> None:
    make_eval(tmp_path / "ev")
    assert run_cli("run", "ev", "-g", cwd=tmp_path).code == 0
    res = run_cli("build", "--history", "5", "ev", "-o", "site", cwd=tmp_path)
    assert res.code == 2, res.both
    assert res.err.strip() == "Error: --history: ev is not inside a git repository"
    assert not (tmp_path / "site").exists()
    res = run_cli("serve", "--history", "5", "ev", "--port", "0", cwd=tmp_path)
    assert res.code == 2, res.both
    assert res.err.strip() == "Error: --history: ev is not inside a git repository"


def test_the_history_script_needs_no_network_and_no_html_parsing() -> None:
    for name in ("history.js", "history.css"):
        text = asset(name).decode()
        assert set(re.findall(r"[a-z]+://[^\s\"')]+", text)) == set(), name
    script = asset("history.js").decode()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                 "new Function", "setAttribute(\"on", "setAttribute(\"style"):
        assert sink not in script, sink


# --- in the browser ---------------------------------------------------------------------


def points(page: Any, config: str, model: str) -> list[str]:
    """The commits (oldest first) of the points drawn for one config × model."""
    return page.eval_on_selector_all(
        f'svg.historychart .point[data-config="{config}"][data-model="{model}"]',
        "(els) => els.map((e) => e.getAttribute('data-sha'))")


def check_chart(w: Watched, built: Built) -> None:
    """One line per config × model with a point per commit that has its figures, the
    damaged commit left out and listed, the grader change marked, the subject on hover."""
    page = w.page
    expected = expected_points(built)
    page.wait_for_selector("svg.historychart .point")
    assert page.locator("svg.historychart polyline.line").count() == len(expected)
    for (config, model), shas in expected.items():
        assert points(page, config, model) == shas, (config, model)
    damaged = built.hist.shas[DAMAGED]
    assert page.locator(f'svg.historychart .point[data-sha="{damaged}"]').count() == 0
    listed = page.locator("#s-left-out-of-the-chart li").all_inner_texts()
    assert listed == [f"{damaged[:7]} {SUBJECTS[DAMAGED]} — 1 damaged object"]
    marks = page.locator("svg.historychart .mark-grader")
    assert marks.count() == 1
    assert marks.get_attribute("data-sha") == built.hist.shas[GRADER_EDITED]
    for mark, index in (("tasks", TASK_ADDED), ("runner", RUNNER_EDITED)):
        found = page.locator(f"svg.historychart .mark-{mark}")
        assert [found.nth(i).get_attribute("data-sha") for i in range(found.count())] == \
            [built.hist.shas[index]], mark

    point = page.locator(f'svg.historychart .point[data-config="default"][data-model="large"]'
                         f'[data-sha="{built.hist.shas[GRADER_EDITED]}"]')
    point.hover()
    tip = page.locator(".histtip")
    wait_until(page, "!document.querySelector('.histtip').hidden")
    lines = tip.inner_text().splitlines()
    assert lines[0] == SUBJECTS[GRADER_EDITED]
    assert lines[1].startswith(f"{built.hist.shas[GRADER_EDITED][:7]} · 2026-01-02 03:00:00 UTC")
    assert lines[2].startswith("large (default): 50% [15%, 85%] · 4 Runs · grader ")
    assert lines[3].startswith("grader version ") and "(graders/default.yaml changed)" in lines[3]
    # the table under the chart: one row per commit and pair (one for a commit without any)
    for i, sha in enumerate(built.hist.shas):
        rows = page.locator(f'table.historytable tbody tr.pair[data-sha="{sha}"]')
        if i == DAMAGED:
            head = page.locator(f'table.historytable tr.commitrow[data-sha="{sha}"]')
            assert "left out of the chart: 1 damaged object" in head.inner_text()
            assert rows.locator("td.bad").all_inner_texts() == ["damaged: 1 object (left out)"]
        else:
            wanted = len(leaderboard(built, sha)) if i < len(SUBJECTS) - 1 else 1
            if i == RUNNER_EDITED:      # and a row of 0 Runs per pair made stale there
                wanted = len(pairs_before(built, i))
            assert rows.count() == wanted, sha


def pairs_before(built: Built, index: int) -> set[tuple[str, str]]:
    """The config x model pairs counted at the commit before `index` (newest first) or at
    `index` itself."""
    return set(leaderboard(built, built.hist.shas[index + 1])) | \
        set(leaderboard(built, built.hist.shas[index]))


def check_diff(w: Watched, built: Built) -> None:
    """A click on a point opens the diff of its commit against its parent."""
    page = w.page
    sha, parent = built.hist.shas[GRADER_EDITED], built.hist.shas[GRADER_EDITED + 1]
    page.locator(f'svg.historychart a.point[data-config="default"][data-model="large"]'
                 f'[data-sha="{sha}"]').click()
    page.wait_for_selector("table.groups tbody tr")
    assert page.url.endswith(f"#/qa/diff/{sha}")
    assert page.locator("h1").inner_text() == f"qa: {parent[:7]} → {sha[:7]}"
    (entry,) = built.cli_json("diff", parent, sha, "qa")["evals"]
    rows = page.locator("table.groups tbody tr")
    assert rows.count() == len(entry["groups"])
    for i, g in enumerate(entry["groups"]):
        row = rows.nth(i)
        assert row.locator("td").nth(0).inner_text() == g["model"]
        a, b = g["a"], g["b"]
        assert row.locator("td.pass-a").inner_text() == \
            f"{round(100 * a['pass_rate'])}% ({a['passed']}/{a['runs']})"
        assert row.locator("td.pass-b").inner_text() == \
            f"{round(100 * b['pass_rate'])}% ({b['passed']}/{b['runs']})"
    page.locator("#crumbs a", has_text="history").click()
    page.wait_for_selector("svg.historychart .point")


def test_the_static_history_page(built: Built, open_page) -> None:
    w = open_page(built.index)
    w.page.goto(built.index + "#/qa")
    w.page.get_by_role("link", name="History →").click()
    w.page.wait_for_selector("svg.historychart")
    # the figure the leaderboard ranks by: every counted Grade has a score now
    assert w.page.locator(".histtoggle a.on").inner_text() == "Score (mean)"
    w.page.locator(".histtoggle a", has_text="Pass rate").click()
    wait_until(w.page, "location.hash === '#/qa/history/pass-rate'")
    check_chart(w, built)
    w.shot("history-page")
    # the keyboard reaches the points: a focused point shows its figures too
    w.page.locator("body").click(position={"x": 1, "y": 1})
    w.page.locator("svg.historychart a.point").first.focus()
    wait_until(w.page, "!document.querySelector('.histtip').hidden")
    assert w.page.locator(".histtip .subject").inner_text() == "state 1"
    check_diff(w, built)
    w.page.locator(".histtoggle a", has_text="Score (mean)").click()
    wait_until(w.page, "location.hash === '#/qa/history/score'")
    w.page.wait_for_selector("svg.historychart .point")
    assert points(w.page, "default", "tiny") == []          # no score: no point
    for (config, model), shas in expected_points(built, "mean").items():
        assert points(w.page, config, model) == shas, (config, model)
    w.clean()


def test_serve_makes_the_history_on_request_and_follows_head(tmp_path: Path,
                                                            open_page) -> None:
    hist = make_history(tmp_path / "repo")
    env = {"SMEVALS_CACHE_DIR": str(tmp_path / "cache")}
    server = start(make_server(SiteOptions((str(hist.qa),)), "127.0.0.1", 0,
                               poll_seconds=0.3, check_every=0.1))
    try:
        status, _headers, body = fetch(server, f"/data/qa/diffs/{'0' * 40}.js")
        assert status == 404                                # not a listed commit
        w = open_page(server.url)
        w.page.goto(server.url + "#/qa/history/pass-rate")
        check_chart(w, Built(hist, tmp_path / "unused", env))
        check_diff(w, Built(hist, tmp_path / "unused", env))
        # a new commit appears without a reload
        hist.builder.run("huge-gamma", "gamma", "huge")
        hist.builder.grade("huge-gamma", "pass", 1.0)
        commit(hist.repo, f"state 7: huge passes gamma {HOSTILE}")
        wait_until(w.page, "document.querySelector('table.historytable') && document"
                           ".querySelector('table.historytable').innerText.includes('state 7')")
        assert len(points(w.page, "default", "huge")) == 3
        newest = w.page.locator("table.historytable tr.commitrow .subject").first
        assert newest.inner_text() == f"state 7: huge passes gamma {HOSTILE}"   # text, not HTML
        head = git_plain(hist.repo, "rev-parse", "HEAD").strip()
        w.page.locator(f'svg.historychart .point[data-sha="{head}"]').first.hover()
        wait_until(w.page, "!document.querySelector('.histtip').hidden")
        assert HOSTILE in w.page.locator(".histtip .subject").inner_text()
        w.clean()
    finally:
        server.shutdown()
        server.server_close()


# --- serve, without a browser ------------------------------------------------------------


def served_doc(server: Any, rel: str) -> tuple[int, Any]:
    status, _headers, body = fetch(server, f"/data/qa/{rel}")
    return status, jsdata.decode(body)[1] if status == 200 else None


def test_a_shallow_clone_says_how_many_commits_it_read(built: Built, tmp_path: Path) -> None:
    """Three commits in the clone: the oldest has no diff page (its parent is not there),
    in the static build and in `serve`."""
    clone = tmp_path / "clone"
    git_plain(tmp_path, "clone", "-q", "--depth", "3", built.hist.repo.as_uri(), str(clone))
    res = run_cli("build", "--history", "10", "-o", "site", "qa", cwd=clone, env=built.env)
    assert res.code == 0, res.both
    doc = jsdata.decode((clone / "site" / "data" / "qa" / "history.js").read_bytes())[1]
    assert (doc["shallow"], doc["commits_read"]) == (True, 3)
    assert [c["subject"] for c in doc["commits"]] == SUBJECTS[:3]
    assert [c["diff"] for c in doc["commits"]] == [True, True, False]
    server = start(make_server(SiteOptions((str(clone / "qa"),)), "127.0.0.1", 0))
    try:
        status, live = served_doc(server, "history.js")
        assert status == 200
        assert [c["diff"] for c in live["commits"]] == [True, True, False]
        assert served_doc(server, f"diffs/{built.hist.shas[1]}.js")[0] == 200
        assert served_doc(server, f"diffs/{built.hist.shas[2]}.js")[0] == 404
    finally:
        server.shutdown()
        server.server_close()
    server = start(make_server(SiteOptions((str(clone / "qa"),), history=0), "127.0.0.1", 0))
    try:                                                # --history 0: no History page
        assert served_doc(server, "index.js")[1]["history"] is False
        assert served_doc(server, "history.js")[0] == 404
    finally:
        server.shutdown()
        server.server_close()


def test_serve_has_no_history_page_outside_git_unless_asked(tmp_path: Path) -> None:
    make_eval(tmp_path / "ev", name="qa")
    assert run_cli("run", "ev", "-g", cwd=tmp_path).code == 0
    server = start(make_server(SiteOptions((str(tmp_path / "ev"),)), "127.0.0.1", 0))
    try:
        assert served_doc(server, "index.js")[1]["history"] is False
        assert served_doc(server, "history.js")[0] == 404
        assert served_doc(server, f"diffs/{'a' * 40}.js")[0] == 404
    finally:
        server.shutdown()
        server.server_close()


def test_serve_says_why_it_cannot_read_the_history(built: Built, tmp_path: Path) -> None:
    """HEAD moved to a branch without commits: the page keeps the last good reading and
    says why; back on a branch, the history is read again."""
    clone = tmp_path / "clone"
    git_plain(tmp_path, "clone", "-q", built.hist.repo.as_uri(), str(clone))
    server = start(make_server(SiteOptions((str(clone / "qa"),)), "127.0.0.1", 0,
                               check_every=0.01))
    try:
        status, doc = served_doc(server, "history.js")
        assert (status, doc["error"], len(doc["commits"])) == (200, None, len(SUBJECTS))
        git_plain(clone, "checkout", "-q", "--orphan", "fresh")
        time.sleep(SHARED_SECONDS + 0.05)          # HEAD is looked at again
        status, doc = served_doc(server, "history.js")
        assert (status, doc["error"]) == (200, f"{clone / 'qa'}: HEAD names no commit")
        assert [c["subject"] for c in doc["commits"]] == SUBJECTS
        git_plain(clone, "checkout", "-q", "main")
        time.sleep(SHARED_SECONDS + 0.05)          # HEAD is looked at again
        status, doc = served_doc(server, "history.js")
        assert (status, doc["error"], len(doc["commits"])) == (200, None, len(SUBJECTS))
    finally:
        server.shutdown()
        server.server_close()
