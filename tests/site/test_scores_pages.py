"""The site's pages: a leaderboard whose scores are partial ranks by pass rate and shows each
score's n; a failed Grade's score appears only with its reason (Run page, Task page); Tasks
deleted from the Eval are neither counted nor in the grid, and are listed apart with their
old Runs (docs/web-report.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from smevals.site import jsdata
from tests.helpers import run_cli, write
from tests.helpers.scores import ENV, FAILS_WITH_SCORE_1, NOTE, scores_repo

BOARD_ROWS = "table.leaderboard tbody tr"


def data(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = jsdata.decode(path.read_bytes())[1]
    return out


def test_partial_scores_and_deleted_tasks_on_the_eval_page(tmp_path: Path,
                                                          open_page) -> None:
    ev = scores_repo(tmp_path)
    (ev / "tasks" / "t8.yaml").unlink()                  # both models' t8 Runs stay stored
    site = tmp_path / "site"
    built = run_cli("build", "-o", str(site), str(ev), env=ENV)
    assert built.code == 0, built.both

    index = data(site / "data" / "qa" / "index.js")
    assert index["grid"]["tasks"] == [f"t{i}" for i in range(1, 8)]
    assert data(site / "data" / "index.js")["evals"][0]["tasks"] == 7
    assert [(t["name"], t["current"]) for t in index["tasks"]][-1] == ("t8", False)

    w = open_page(site.as_uri())
    page = w.page
    page.goto((site / "index.html").as_uri())
    card = page.locator("a.evalcard").inner_text()
    assert "7 tasks" in card and "mean 1.00 (n=12 of 14)" in card
    assert "Best: beta (default) pass 100%" in card
    page.locator("a.evalcard").click()
    page.wait_for_selector(BOARD_ROWS)
    assert page.locator("table.leaderboard thead th").all_inner_texts() == [
        "#", "Model", "Config", "Pass rate", "Mean score", "Runs"]
    rows = [r.locator("td").all_inner_texts() for r in page.locator(BOARD_ROWS).all()]
    assert [(r[0], r[1], r[3], r[4]) for r in rows] == [
        ("1", "beta", "100% (7/7)", "1.00 ±0.00"),
        ("2", "alpha", "71% (5/7)", "1.00 ±0.00 (n=5 of 7)")]
    assert page.locator("p.ranked").inner_text().startswith("Ranked by pass rate")
    grid_rows = page.locator("table.grid tbody th").all_inner_texts()
    assert grid_rows == [f"t{i}" for i in range(1, 8)]
    deleted = page.locator("p.deleted").inner_text()
    assert deleted == "No longer in the Eval (their Runs are not counted): t8 (2 Runs)"
    page.locator("p.deleted a", has_text="t8").click()
    page.wait_for_selector(".columns .column")
    assert "no longer in the Eval" in page.locator("p.note").inner_text()
    w.shot("scores-eval")
    w.clean()


def test_a_failed_grade_scores_with_its_reason_on_the_run_page(tmp_path: Path,
                                                               open_page) -> None:
    ev = scores_repo(tmp_path)
    write(ev / "graders" / "default.yaml", FAILS_WITH_SCORE_1)
    assert run_cli("grade", str(ev), "-m", "alpha", "-t", "t8", env=ENV).code == 1
    site = tmp_path / "site"
    assert run_cli("build", "-o", str(site), str(ev), env=ENV).code == 0
    run_id = data(site / "data" / "qa" / "tasks" / "t8.js")["columns"]
    alpha = next(c for c in run_id if c["model"] == "alpha")["runs"][0]
    assert (alpha["status"], alpha["score"], alpha["score_note"]) == ("fail", 1.0, NOTE)

    w = open_page(site.as_uri())
    page = w.page
    page.goto((site / "index.html").as_uri() + f"#/qa/run/{alpha['id']}")
    page.wait_for_selector("table.checks")
    assert page.locator(".runmeta .score").inner_text() == f"score 1.00 ({NOTE})"
    history = page.locator(".history > details summary").all_inner_texts()
    assert history[0].endswith(f"score 1.00 ({NOTE})")       # the current Grade
    assert not history[1].endswith("score 1.00")              # the first Grade: no score
    page.goto((site / "index.html").as_uri() + "#/qa/task/t8")
    page.wait_for_selector(".columns .column")
    assert f"score 1.00 ({NOTE})" in page.locator(".column", has_text="alpha").inner_text()
    w.shot("scores-run")
    w.clean()
