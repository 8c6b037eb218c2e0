"""The data behind exploring the site: one line per Run for the filters and the search
(`data/<eval>/explore.js`), the Checks table of the Eval page, and the Run page's
timelines (transcript, recorded tool calls, judge calls) and workspace diff, all capped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from smevals.site import jsdata
from smevals.site.serve import SiteServer
from smevals.site.timeline import MAX_ENTRIES, TEXT_LIMIT, bounded, clean
from tests.helpers import ECHO_RUNNER, make_eval, run_cli
from tests.helpers.web.agentish import AgentSite, build_agentish
from tests.helpers.web.pages import fetch


@pytest.fixture(scope="module")
def agentish(tmp_path_factory: pytest.TempPathFactory) -> AgentSite:
    return build_agentish(tmp_path_factory.mktemp("agentish"))


def lines(site: AgentSite) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = site.data("agentish/explore")["runs"]
    return out


def test_one_line_per_run_with_its_status_checks_and_flags(agentish: AgentSite) -> None:
    doc = agentish.data("agentish/explore")
    assert (doc["kind"], doc["checks"], doc["excerpt_chars"]) == ("explore", ["tone", "fixed"], 500)
    got = [(r["task"], r["model"], r["status"], r["checks"], r["flaky"], r["flipped"])
           for r in doc["runs"]]
    twice = [line for pair in [
        ("alpha", "good-1", "pass", "pp", False, False),
        ("alpha", "bad-1", "fail", "fp", False, False)] for line in (pair, pair)]
    assert got == twice + [         # in the grid's order: tasks, then models as ranked
        ("beta", "good-1", "pass", "pp", True, False),
        ("beta", "good-1", "fail", "pf", True, False),
        ("beta", "bad-1", "fail", "fp", False, False),
        ("beta", "bad-1", "fail", "fp", False, False),
        *[("delta", m, "error", "ep", False, False) for m in ("good-1",) * 2 + ("bad-1",) * 2],
        ("gamma", "good-1", "pass", "pp", False, False),
        ("gamma", "good-1", "pass", "pp", False, False),
        ("gamma", "bad-1", "failed", "--", False, False),
        ("gamma", "bad-1", "failed", "--", False, False)]
    zebra = [(r["task"], r["model"], r["sample"], r["score"])
             for r in doc["runs"] if "zebra" in r["excerpt"]]
    assert zebra == [("beta", "good-1", 1, None)]
    delta = {r["excerpt"] for r in doc["runs"] if r["task"] == "delta"}
    assert delta == {"fixed nothing, a quiet penguin\n"}


def test_the_checks_table_counts_each_checks_verdicts_per_model(agentish: AgentSite) -> None:
    index = agentish.data("agentish/index")
    models = [c["model"] for c in index["grid"]["columns"]]
    table = {row["check"]: row["columns"] for row in index["checks"]}
    assert list(table) == ["tone", "fixed"]
    shown = {(name, model): (c["runs"], c["passed"], c["failed"], c["errors"], c["skipped"],
                             c["pass_rate"], c["mean"], c["scored"], c["text"])
             for name, cols in table.items() for model, c in zip(models, cols, strict=True)}
    assert shown == {
        # good-1: alpha 2, beta 2, gamma 2 judged polite; delta's 2 judge answers no verdict
        ("tone", "good-1"): (8, 6, 0, 2, 0, 1.0, 1.0, 6, "100% (6/6), 2 errors"),
        ("tone", "bad-1"): (6, 0, 4, 2, 0, 0.0, 0.0, 4, "0% (0/4), 2 errors"),
        # the errored Grades' `fixed` verdicts count: it had one
        ("fixed", "good-1"): (8, 7, 1, 0, 0, 0.875, None, 0, "88% (7/8)"),
        ("fixed", "bad-1"): (6, 6, 0, 0, 0, 1.0, None, 0, "100% (6/6)")}


def test_the_checks_table_says_what_report_says(agentish: AgentSite) -> None:
    """Each cell holds the figures of `smevals report --format json` for that Check and
    config x model, and the text of its Markdown Checks table."""
    index = agentish.data("agentish/index")
    doc = json.loads(run_cli("report", str(agentish.ev), "--format", "json",
                             env=agentish.env).out)
    want = {(g["config"], g["model"], c["check"]): c
            for g in doc["evals"][0]["leaderboard"] for c in g["checks"]}
    markdown = run_cli("report", str(agentish.ev), env=agentish.env).out
    columns = index["grid"]["columns"]
    for row in index["checks"]:
        cells = row["columns"]
        for column, cell in zip(columns, cells, strict=True):
            figures = {k: v for k, v in cell.items() if k != "text"}
            assert figures == want[(column["config"], column["model"], row["check"])]
        assert f"| {row['check']} | {' | '.join(c['text'] for c in cells)} |" in markdown


def test_a_tag_page_has_the_checks_of_its_rows_only(tmp_path: Path) -> None:
    checker = "#!/bin/sh\nprintf '{\"tags\": [\"odd\"]}'\nexit 1\n"
    ev = make_eval(tmp_path / "ev", graders={"default": (
        "checks:\n  - checker: contains\n    value: one\n    required: true\n"
        "  - checker: ./tagger\n")},
        files={"configs/echo.sh": ECHO_RUNNER, "graders/tagger": checker})
    assert run_cli("run", str(ev), "-g").code == 1
    assert run_cli("build", "-o", str(tmp_path / "site"), str(ev)).code == 0

    def table(key: str) -> dict[str, list[tuple[int, int, int, int]]]:
        doc = jsdata.decode((tmp_path / "site" / "data" / "ev" / f"{key}.js").read_bytes())[1]
        return {row["check"]: [(c["runs"], c["passed"], c["failed"], c["skipped"])
                               for c in row["columns"]] for row in doc["checks"]}

    # task two fails the required `contains`, so its `./tagger` is skipped
    assert table("index") == {"contains": [(2, 1, 1, 0)], "./tagger": [(2, 0, 1, 1)]}
    assert table("tags/odd") == {"contains": [(1, 1, 0, 0)], "./tagger": [(1, 0, 1, 0)]}


def test_a_transcript_becomes_a_timeline(agentish: AgentSite) -> None:
    run = agentish.data(f"agentish/runs/{agentish.run_id('alpha', 'good-1', 0)}")
    [own, judge] = run["timelines"]
    assert (own["title"], own["source"], own["cut"]) == ("Transcript", "transcript.jsonl", None)
    assert own["file"]["download"] == "transcript.jsonl"
    kinds = [(e["type"], e.get("role") or e.get("name")) for e in own["entries"]]
    assert kinds == [("message", "user"), ("message", "assistant"), ("tool_call", "read_file"),
                     ("tool_result", "read_file"), ("tool_call", "bash"), ("tool_result", "bash"),
                     ("message", "assistant")]
    assert own["entries"][3] == {"type": "tool_result", "id": "c1", "name": "read_file",
                                 "output": "No such file: parser.py", "is_error": True, "turn": 0}
    assert own["entries"][5]["output"].splitlines() == [str(n) for n in range(1, 401)]
    assert own["entries"][1]["t"] == 0.5
    # the judge of the Grade that counts: its request, its answer, its verdict
    assert judge["title"] == "Judge: tone"
    assert [(e["type"], e.get("role")) for e in judge["entries"]] == [
        ("message", "system"), ("message", "user"), ("message", "assistant"), ("event", None)]
    assert "Please fix alpha" in judge["entries"][1]["text"]
    assert judge["entries"][3]["raw"] == {"verdict": {"pass": True, "reason": "polite enough"},
                                          "cached": False}
    diff = run["workspace_diff"]
    assert diff["truncated"] is False
    assert diff["text"].splitlines()[3:6] == ["@@ -1,4 +1,3 @@", " def parse(text):",
                                              '-    return text.split(",")']


def test_a_hostile_transcript_is_capped_and_kept_as_text(agentish: AgentSite) -> None:
    rid = agentish.run_id("alpha", "bad-1", 0)
    run = agentish.data(f"agentish/runs/{rid}")
    own = run["timelines"][0]
    entries = own["entries"]
    assert [e["type"] for e in entries] == ["message", "error", "error", "tool_call", "tool_result",
                                            "event"]
    assert entries[0]["text"].startswith('<script>window.PWNED = "transcript"')     # as text
    assert [e["message"] for e in entries[1:3]] == ["line 2 is not a transcript entry",
                                                    "line 3 is not a transcript entry"]
    assert entries[3] == {"type": "tool_call", "id": "<i>x</i>", "name": "<b>bash</b>",
                          "arguments": "{not json <script>"}
    big = entries[4]["output"]                      # a 5 MiB line, cut
    assert len(big) == TEXT_LIMIT + len("\n[... cut]") and big.endswith("x\n[... cut]")
    assert entries[5] == {"type": "event", "raw": {"type": "surprise", "payload": {
        "html": "<script>window.PWNED=3</script>"}}}
    page = agentish.site / "data" / "agentish" / "runs" / f"{rid}.js"
    assert page.stat().st_size < 200_000
    assert run["workspace_diff"] is None


def test_recorded_tool_calls_are_a_timeline_without_a_transcript(agentish: AgentSite) -> None:
    run = agentish.data(f"agentish/runs/{agentish.run_id('gamma', 'good-1', 0)}")
    own = run["timelines"][0]
    assert (own["title"], own["source"], own["file"]) == ("Tool calls", "usage.tool_calls", None)
    assert own["entries"] == [
        {"type": "tool_call", "name": "search", "arguments": {"q": "<b>gamma</b>"}},
        {"type": "tool_call", "name": "list_files"}]


def test_a_timeline_is_bounded() -> None:
    many = ({"type": "message", "role": "assistant", "text": str(i)}
            for i in range(MAX_ENTRIES + 5))
    shown = bounded("T", "x", many)
    assert len(shown["entries"]) == MAX_ENTRIES
    assert shown["cut"].startswith(f"shown up to {MAX_ENTRIES} entries")
    huge = ({"type": "tool_result", "output": "y" * 100_000} for _ in range(200))
    assert len(bounded("T", "x", huge)["entries"]) < 200


@pytest.mark.parametrize("entry, shown", [
    ({"type": "tool_result", "id": 3, "output": ["a"], "is_error": "yes", "exit_code": True},
     {"type": "tool_result", "id": "3", "output": '["a"]', "is_error": False}),
    ({"type": "message", "role": None, "text": "hi", "turn": "1", "t": 2, "extra": "<x>"},
     {"type": "message", "text": "hi", "t": 2}),
    ({"type": "no such type", "x": 1}, {"type": "event", "raw": {"type": "no such type", "x": 1}}),
])
def test_an_entry_keeps_only_the_keys_and_types_of_its_shape(entry: dict[str, Any],
                                                             shown: dict[str, Any]) -> None:
    assert clean(entry) == shown


def test_serve_sends_the_explore_data_and_the_new_scripts(served: SiteServer) -> None:
    status, headers, body = fetch(served, "/data/qa/explore.js")
    assert status == 200 and headers["content-type"] == "text/javascript; charset=utf-8"
    key, doc = jsdata.decode(body)
    assert key == "qa/explore" and doc["kind"] == "explore" and doc["runs"]
    for name in ("explore.js", "timeline.js"):
        status, headers, _body = fetch(served, f"/{name}")
        assert (status, headers["content-type"]) == (200, "text/javascript; charset=utf-8")
    assert fetch(served, "/data/qa/explore/x.js")[0] == 404


def test_a_judge_that_gave_no_verdict_ends_its_timeline_with_the_error(
        agentish: AgentSite) -> None:
    run = agentish.data(f"agentish/runs/{agentish.run_id('delta', 'good-1', 0)}")
    [judge] = run["timelines"]                        # no transcript, no recorded tool calls
    assert judge["title"] == "Judge: tone"
    assert [(e["type"], e.get("role")) for e in judge["entries"]] == [
        ("message", "system"), ("message", "user"), ("message", "assistant"), ("error", None)]
    assert judge["entries"][2]["text"] == "not a verdict"
    assert judge["entries"][3]["message"].startswith("unparseable verdict: ")
