"""The web diff page shows the figures of `smevals diff --format json` for the same sides:
the paired score change and its interval (never the unpaired difference beside the paired
interval), the stale Runs each side left out, the cause of a flip in words, and the Runs
added or removed counted per model instead of listed by id."""

from __future__ import annotations

import json
from typing import Any

from tests.helpers import run_cli
from tests.web.conftest import Sites


def fixed(x: float) -> str:
    """JavaScript's toFixed(2) for the values here (no ties at the third digit)."""
    return f"{x:.2f}"


def expected_delta(group: dict[str, Any]) -> str:
    p = group["paired"]
    if not group["scores_complete"] and (group["a"]["scored"] or group["b"]["scored"]):
        return "– (not every Grade has a score)"
    if p is None or p["mean_delta"] is None:
        return "–"
    sign = "+" if p["mean_delta"] > 0 else ""
    ci = f" [{fixed(p['ci'][0])}, {fixed(p['ci'][1])}]" if p["ci"] else ""
    tasks = f"{p['scored']} task" + ("" if p["scored"] == 1 else "s")
    return f"{sign}{fixed(p['mean_delta'])}{ci} ({tasks})"


def test_the_diff_page_shows_the_paired_figures_of_smevals_diff(sites: Sites,
                                                                 open_page) -> None:
    res = run_cli("diff", "HEAD~2", "HEAD~1", str(sites.qa), "--format", "json",
                  cwd=sites.repo, env=sites.env)
    (ev,) = json.loads(res.out)["evals"]
    # the page once printed the unpaired difference here: it differs for small (default)
    small = next(g for g in ev["groups"] if (g["config"], g["model"]) == ("default", "small"))
    assert fixed(small["delta"]["mean"]) != fixed(small["paired"]["mean_delta"])

    w = open_page(sites.index)
    page = w.page
    page.goto(sites.index + "#/qa/diff")
    page.wait_for_selector("table.groups tbody tr")
    rows = page.locator("table.groups tbody tr")
    assert rows.count() == len(ev["groups"])
    for i, g in enumerate(ev["groups"]):
        row = rows.nth(i)
        cell = row.locator("td")
        assert (cell.nth(0).inner_text(), cell.nth(1).inner_text()) == (g["model"], g["config"])
        assert row.locator("td.delta").inner_text() == expected_delta(g), g
        p = g["paired"]
        assert row.locator("td.moves").inner_text() == f"{p['regressions']} / {p['fixes']}"
        tasks = f"{p['tasks']} task" + ("" if p["tasks"] == 1 else "s")
        assert row.locator("td.p").inner_text() == f"{p['p']:.3f} ({tasks})"
        a = g["a"]
        assert row.locator("td.pass-a").inner_text() == \
            f"{round(100 * a['pass_rate'])}% ({a['passed']}/{a['runs']})"
        assert cell.nth(2).inner_text() == g["verdict"]
    assert "Δ score, paired (95% CI)" in page.locator("table.groups thead").inner_text()
    assert ev["version_changed_files"] == ["graders/default.yaml"]      # why the version moved
    assert (f"grader default {ev['version_a']} → {ev['version_b']} (changed: "
            "graders/default.yaml) · ") in page.locator("p.muted.small").first.inner_text()

    stale = page.locator(".leftout .stale").inner_text()
    assert stale == "Stale Runs left out: A 1 (task edited: 1); B 1 (task edited: 1)."
    assert ev["stale"]["a"] == {"left_out": 1, "reasons": {"task_edited": 1}}

    causes = page.locator("table.flips td.cause").all_inner_texts()
    assert causes == ["regraded: the same Runs"] * len(ev["flips"])
    w.shot("diff-page")
    w.clean()


def test_added_runs_are_counted_per_model(sites: Sites, open_page, tmp_path) -> None:
    """HEAD~1 -> HEAD adds Runs of two models: the page counts them per model."""
    site = tmp_path / "site"
    built = run_cli("build", "-o", str(site), "--diff", "HEAD~1", "HEAD", str(sites.qa),
                    cwd=sites.repo, env=sites.env)
    assert built.code == 0, built.both
    res = run_cli("diff", "HEAD~1", "HEAD", str(sites.qa), "--format", "json",
                  cwd=sites.repo, env=sites.env)
    added = json.loads(res.out)["evals"][0]["added"]
    assert len(added["runs"]) == 3
    w = open_page(site.as_uri())
    w.page.goto((site / "index.html").as_uri() + "#/qa/diff")
    w.page.wait_for_selector("#s-added-and-removed .runs")
    text = w.page.locator("#s-added-and-removed .runs").inner_text()
    assert text == "3 Runs — huge (default): 1, large (default): 2"
    assert not any(run_id in w.page.locator("#s-added-and-removed").inner_text()
                   for run_id in added["runs"])
    w.clean()
