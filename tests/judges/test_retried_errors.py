"""Errored Grades that a later verdict replaced (retries that succeeded) are kept as
evidence, left out of a Run's Grade list, and removed by `gc --errored` (and
`gc --superseded`); an errored Grade that is still the newest stays."""

from __future__ import annotations

from pathlib import Path

from smevals.site.load import SiteOptions, load_all
from smevals.site.pages import run_page
from smevals.site.serve import ServeLinker
from tests.helpers.judges import answer_with, grades, judge_eval

JUDGE = "  - checker: llm_judge\n    name: tone\n    rubric: Is it polite?\n"


def test_retried_errors_do_not_pile_up(tmp_path: Path, cli, fake_openai) -> None:
    answer_with(fake_openai, lambda user: "no verdict")
    ev = judge_eval(tmp_path / "ev", fake_openai, JUDGE)
    cli("run", str(ev))
    for _attempt in range(3):
        assert cli("grade", str(ev)).code == 2
    answer_with(fake_openai, lambda user: {"reason": "ok", "pass": True} if "hello one" in user
                else "no verdict")
    assert cli("grade", str(ev)).code == 2                  # one gets a verdict, two does not
    assert [g["outcome"] for g in grades(ev)["one"]] == ["error"] * 3 + ["pass"]
    assert [g["outcome"] for g in grades(ev)["two"]] == ["error"] * 4
    [loaded] = load_all(SiteOptions((str(ev),)))
    pages = {r.record["task"]["name"]: run_page(loaded, r, ServeLinker("ev"))
             for r in loaded.runs}
    assert [g["outcome"] for g in pages["one"]["grades"]] == ["pass"]
    assert [g["outcome"] for g in pages["two"]["grades"]] == ["error"] * 4
    report = cli("report", str(ev))
    assert "- Graded: 1 runs (0 failed, 0 ungraded)\n" in report.out
    assert "- ⚠ Errors: 1 run(s) whose Grade is an error" in report.out
    retried = sorted(Path(g["_dir"]) for g in grades(ev)["one"][:3])
    res = cli("gc", str(ev), "--errored", "--dry-run", cwd=tmp_path)
    lines = res.out.splitlines()
    assert lines[-1] == "3 item(s) would be removed"
    version = grades(ev)["one"][0]["grader"]["version"][:12]
    assert sorted(lines[:-1]) == [
        f"would remove errored Grade superseded by a verdict (grader default version "
        f"{version}): {p.relative_to(tmp_path)}" for p in retried]
    assert cli("gc", str(ev), "--superseded", "--dry-run").out.endswith(
        "3 item(s) would be removed\n")
    assert cli("gc", str(ev), "--errored").out.endswith("3 item(s) removed\n")
    assert not any(p.exists() for p in retried)
    assert [g["outcome"] for g in grades(ev)["one"]] == ["pass"]
    assert len(grades(ev)["two"]) == 4                      # still errors: kept
    assert cli("verify", str(ev)).code == 0
    assert _undated(cli("report", str(ev)).out) == _undated(report.out)


def _undated(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("- Generated: ")]
