"""The web report on the seven commits of issue 37 (tests/report/sevencommits.py): the
History commit's diff page says which part of each change the grader made, as `smevals
diff` does; its verdict column is in view at 1400 px without scrolling; a cell that did
not change is not coloured as a change; the History page's tooltip at the grader's commit
carries the split; the README commit is listed as what it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import git as git_plain
from tests.helpers import run_cli
from tests.report.sevencommits import EVAL, SUBJECTS, seven_commits
from tests.web.conftest import EPOCH
from tests.web.pages import wait_until


@pytest.fixture(scope="module")
def seven_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("sevensite")
    env = {"SMEVALS_CACHE_DIR": str(root / "cache"), "SOURCE_DATE_EPOCH": EPOCH}
    repo = root / "repo"
    repo.mkdir()
    seven_commits(repo, env)
    built = run_cli("build", "--history", "10", "-o", str(root / "site"), EVAL, cwd=repo,
                    env=env)
    assert built.code == 0, built.both
    return repo, root / "site", env


def shas(repo: Path) -> dict[str, str]:
    """Subject -> commit."""
    lines = git_plain(repo, "log", "--format=%H %s").splitlines()
    return {line.split(" ", 1)[1]: line.split(" ", 1)[0] for line in lines}


def cli_diff(repo: Path, env: dict[str, str], a: str, b: str) -> dict[str, Any]:
    res = run_cli("diff", a, b, EVAL, "--format", "json", cwd=repo, env=env)
    assert res.code == 0, res.both
    (entry,) = json.loads(res.out)["evals"]
    return dict(entry)


def test_the_grader_commits_diff_page_splits_the_change(seven_site, browser) -> None:
    repo, site, env = seven_site
    commits = shas(repo)
    sha, parent = commits["scoring: mean -> min"], commits["three samples each"]
    entry = cli_diff(repo, env, parent, sha)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(5000)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((site / "index.html").as_uri() + f"#/{EVAL}/diff/{sha}")
        page.wait_for_selector("table.groups tbody tr")
        rows = page.locator("table.groups tbody tr")
        assert rows.count() == len(entry["groups"])
        for i, g in enumerate(entry["groups"]):
            row = rows.nth(i)
            verdict = row.locator("td.verdict")
            assert verdict.inner_text() == g["verdict"]
            box = verdict.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 1400, box
            # the pass rates did not move: neither side's cell is coloured as a change
            assert g["delta"]["pass_rate"] == 0
            for cell in (row.locator("td.pass-a"), row.locator("td.pass-b")):
                assert cell.evaluate("e => getComputedStyle(e).backgroundColor") == \
                    "rgba(0, 0, 0, 0)"
            # the score did: B's is marked down
            assert "down" in (row.locator("td.score-b").get_attribute("class") or "")
        assert page.evaluate("document.scrollingElement.scrollLeft") == 0
        assert page.evaluate("document.querySelector('table.groups').closest('.scroll')"
                             ".scrollLeft") == 0
        said = page.locator("#s-grader-and-evidence ul.splits li")
        assert said.all_inner_texts() == [f"{g['model']} ({g['config']}): {g['split']['text']}"
                                          for g in entry["groups"]]
        mumble = next(g for g in entry["groups"] if g["model"] == "mumble-1")
        assert mumble["split"]["carried_by"] == "grader"
        assert "all from the grader" in mumble["split"]["text"]
        figures = page.locator('table.splitfigures tr[data-model="mumble-1"]')
        assert figures.locator("td.g-score").inner_text().startswith("-0.27 [")
        assert figures.locator("td.e-score").inner_text() == "0.00 [0.00, 0.00]"
        page.screenshot(path=str(site.parent / "diff-1400.png"), full_page=True)
        assert errors == []
    finally:
        context.close()


def test_the_history_tooltip_and_the_readme_commit(seven_site, open_page) -> None:
    repo, site, env = seven_site
    commits = shas(repo)
    sha = commits["scoring: mean -> min"]
    index = (site / "index.html").as_uri()
    w = open_page(index)
    page = w.page
    page.goto(index + f"#/{EVAL}/history")
    page.wait_for_selector("svg.historychart .point")
    summary = page.locator(".histsummary").inner_text()
    assert summary == (f"{len(SUBJECTS)} commits changed the results or the Eval, of "
                       f"{len(SUBJECTS)} commits in the history of HEAD.")
    page.locator(f'svg.historychart .point[data-model="mumble-1"][data-sha="{sha}"]').hover()
    wait_until(page, "!document.querySelector('.histtip').hidden")
    tip = page.locator(".histtip").inner_text()
    assert "score -0.27: all from the grader (-0.27 on the same 15 Runs, mean → min)" in tip
    readme = page.locator(f'table.historytable tr.commitrow[data-sha="{commits["README edited"]}"]')
    assert "Only files that change no figure or result changed: json-extraction/README.md" in \
        readme.inner_text()
    assert page.locator(f'svg.historychart .point[data-sha="{commits["README edited"]}"]'
                        ).count() == 0
    w.clean()
