"""`grade` and `regrade` leave stale Runs out (made from an older task, config or runner:
reports do not count them, so grading them is paid work for nothing) unless
`--include-stale`, and say how many they skipped; `run -g` grades the same Runs."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import grade_records, make_eval

SKIPPED = "Skipped 1 stale Run(s); --include-stale grades them\n"


def _graded_runs(ev: Path, version: str) -> list[str]:
    """Run ids graded by grader `version`, sorted."""
    return sorted(r["run"]["id"] for r in grade_records(ev)
                  if r["grader"]["version"].startswith(version))


def test_grade_skips_stale_runs(tmp_path: Path, cli) -> None:
    ev = make_eval(tmp_path / "ev")
    cli("run", str(ev))
    assert cli("grade", str(ev)).code == 0
    (ev / "tasks" / "one.yaml").write_text("prompt: hello one, again\n")   # one's Run: stale
    with (ev / "graders" / "default.yaml").open("a") as grader:            # a new version
        grader.write("  - checker: contains\n    value: hello\n")
    assert cli("grade", str(ev), "--dry-run").out == (
        "Would grade 1 Run(s); judge calls: 0 (0 from the judge cache, 0 to make)\n" + SKIPPED)
    res = cli("grade", str(ev))
    assert res.code == 0, res.both
    version = res.out.split("grader version ")[1][:12]
    assert "Graded 1 Run(s): 1 pass, 0 fail\n" + SKIPPED in res.out
    two = [line.split()[-3] for line in res.out.splitlines() if line.startswith("two / ")]
    assert _graded_runs(ev, version) == two
    res = cli("regrade", str(ev))
    assert "Graded 1 Run(s): 1 pass, 0 fail\n" + SKIPPED in res.out, res.both
    # run -g makes a current Run of `one` and grades it; the stale one stays ungraded.
    res = cli("run", str(ev), "-t", "one", "-g")
    assert res.code == 0, res.both
    fresh = res.out.split("-> ")[1].split()[0]
    assert _graded_runs(ev, version) == sorted([*two, *two, fresh])
    res = cli("grade", str(ev))
    assert res.out == f"ev: grading 0 Run(s) with grader version {version}\n" \
        "Graded 0 Run(s): 0 pass, 0 fail\nSkipped 2 Run(s) already graded by this grader " \
        "version\n" + SKIPPED, res.both
    res = cli("grade", str(ev), "--include-stale")
    assert res.code == 0, res.both
    assert "Graded 1 Run(s): 1 pass, 0 fail\n" in res.out and "stale" not in res.out
    assert len(set(_graded_runs(ev, version))) == 3          # the stale Run too
    report = cli("report", str(ev), "--include-stale")
    assert "- Graded: 3 runs (0 failed, 0 ungraded)\n" in report.out, report.out
