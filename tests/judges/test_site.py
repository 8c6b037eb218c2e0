"""The web report shows errored Grades apart and links each judge call record."""

from __future__ import annotations

from pathlib import Path

from smevals.site.data import eval_index
from smevals.site.load import SiteOptions, load_all
from smevals.site.pages import run_page, task_page
from smevals.site.serve import ServeLinker
from tests.helpers.judges import answer_with, judge_eval

JUDGE = "  - checker: llm_judge\n    name: tone\n    rubric: Is it polite?\n"


def test_errored_grades_in_the_site(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: {"reason": "ok", "pass": True} if "hello one" in user
                else "no verdict")
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev))
    assert cli("grade", str(ev)).code == 2
    [loaded] = load_all(SiteOptions((str(ev),)))
    index = eval_index(loaded)
    assert (index["summary"]["graded"], index["summary"]["errored"]) == (1, 1)
    statuses = {task: task_page(loaded, task)["columns"][0]["runs"][0]["status"]
                for task in ("one", "two")}
    assert statuses == {"one": "pass", "two": "error"}
    run = next(r for r in loaded.runs if r.record["task"]["name"] == "two")
    page = run_page(loaded, run, ServeLinker("ev"))
    [grade] = page["grades"]
    assert grade["outcome"] == "error"
    assert grade["checks"][0]["error"] is True
    names = [f["path"] for f in grade["files"]]
    assert names == ["grader.yaml", "judge-1-tone.json"]
