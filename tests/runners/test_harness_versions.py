"""The version of the harness (asked once per process) and of the agent loop, in each Run's
provenance, in `report`, on the site's Run page, and as `runner changed` in `diff` and
`log` when the Runs of two commits were made by other versions (issue 41)."""

from __future__ import annotations

import json
from pathlib import Path

from smevals.runners.agent.loop import LOOP_VERSION
from tests.helpers import git, make_eval
from tests.helpers.harness import fake_harness, fixture
from tests.helpers.records import runs

GRADER = "checks:\n  - checker: contains\n    value: slugify\n"


def codex_eval(tmp_path: Path, version: str) -> Path:
    ev = make_eval(tmp_path / "ev", tasks={"fix": "prompt: Fix slugify\n"}, files={},
                   configs={"default": "runner: smevals:codex\nmodel: m1\n"
                                       "executable: bin/codex\nsandbox: {view: host}\n"},
                   graders={"default": GRADER})
    set_version(ev, version)
    return ev


def set_version(ev: Path, version: str) -> None:
    fake_harness(ev / "configs" / "bin" / "codex", fixture("codex-good.jsonl"),
                 ev.parent / "seen.json", version=version)


def test_a_harness_version_is_recorded_shown_and_compared(cli, tmp_path: Path) -> None:
    ev = codex_eval(tmp_path, "codex-cli 0.171.0")
    git(ev, "init", "-q")
    assert cli("run", "-g", str(ev)).code == 0
    git(ev, "add", "-A")
    git(ev, "commit", "-qm", "first Runs")
    set_version(ev, "codex-cli 0.172.0")        # another install: the same inputs
    result = cli("run", "-n", "2", "-g", str(ev))
    assert result.code == 0, result.both
    git(ev, "add", "-A")
    git(ev, "commit", "-qm", "a Run of the new Codex")
    assert sorted(r["provenance"]["runner"]["version"] for r in runs(ev)) == \
        ["0.171.0", "0.172.0"]
    assert len({r["inputs"]["hash"] for r in runs(ev)}) == 1   # not stale: docs/decisions.md
    report = cli("report", str(ev))
    assert "- runners: smevals:codex 0.171.0 (1 run), smevals:codex 0.172.0 (1 run)\n" \
        in report.out, report.out
    (group,) = json.loads(cli("report", str(ev), "--format", "json").out)["evals"][0][
        "leaderboard"]
    assert group["runners"] == [{"runner": "smevals:codex 0.171.0", "runs": 1},
                                {"runner": "smevals:codex 0.172.0", "runs": 1}]
    diff = cli("diff", "HEAD~1", "HEAD", str(ev))
    assert diff.code == 0, diff.both
    assert ("- Runner changed: default / m1: smevals:codex 0.171.0 -> smevals:codex 0.171.0, "
            "smevals:codex 0.172.0\n") in diff.out
    doc = json.loads(cli("diff", "HEAD~1", "HEAD", str(ev), "--format", "json").out)
    assert doc["evals"][0]["runner_changed"] == [
        {"config": "default", "model": "m1", "a": ["smevals:codex 0.171.0"],
         "b": ["smevals:codex 0.171.0", "smevals:codex 0.172.0"]}]
    log = json.loads(cli("log", str(ev), "--format", "json").out)
    newest = log["commits"][0]["rows"][0]
    assert "runner" in newest["marks"]
    assert newest["changes"] == ["runner changed: smevals:codex 0.171.0 -> smevals:codex "
                                 "0.171.0, smevals:codex 0.172.0"]


def test_the_run_page_names_the_runner(cli, tmp_path: Path) -> None:
    from smevals.commands.site import SiteOptions, load_all
    from smevals.site.pages import run_page
    from smevals.site.serve import ServeLinker

    ev = codex_eval(tmp_path, "codex-cli 0.171.0")
    assert cli("run", "-g", str(ev)).code == 0
    [loaded] = load_all(SiteOptions((str(ev),)))
    [run] = loaded.runs
    assert run_page(loaded, run, ServeLinker("ev"))["runner"] == "smevals:codex 0.171.0"


def test_the_agent_loop_has_a_version_too(cli, tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: say done\n"},
                   configs={"default": "runner: smevals:agent\nmodel: m1\nbackend: replay\n"
                                       "sessions: sessions\n"},
                   files={"configs/sessions/m1/t.jsonl": '{"content": "done"}\n'})
    assert cli("run", str(ev)).code == 0
    (record,) = runs(ev)
    assert record["provenance"]["runner"] == {"name": "smevals:agent", "version": LOOP_VERSION}


def test_a_harness_that_says_no_version(cli, tmp_path: Path) -> None:
    ev = codex_eval(tmp_path, "Codex, built yesterday")
    assert cli("run", str(ev)).code == 0
    (record,) = runs(ev)
    assert record["provenance"]["runner"]["version"] == \
        "unknown (--version said 'Codex, built yesterday')"
