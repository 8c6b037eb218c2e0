"""The data layer of the site: data files, artifact kinds and names, and page data that
agrees with `smevals report` (the same rows, statistics and Grade that counts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from smevals.site import artifacts, jsdata
from smevals.site.data import Loaded, eval_index, tag_view
from smevals.site.load import SiteOptions, load_all
from smevals.site.pages import run_page, task_page
from smevals.site.serve import ServeLinker, split_path
from tests.helpers import make_eval, run_cli
from tests.helpers.qa import make_qa, state1, state2
from tests.helpers.web.synthetic import big_eval
from tools.imagefiles import jpeg_head, png


@pytest.fixture
def qa(tmp_path: Path) -> Path:
    root = make_qa(tmp_path / "qa")
    state2(state1(root))          # every graded Run regraded by an edited grader
    return root


def loaded_of(path: Path) -> Loaded:
    [loaded] = load_all(SiteOptions((str(path),)))
    return loaded


# --- data files ----------------------------------------------------------------------


def test_data_files_round_trip_hostile_text() -> None:
    doc = {"text": "</script><script>alert(1)</script>\u2028\u2029\"'`${x}", "n": [1, None, 0.5]}
    data = jsdata.encode("qa/runs/x", doc)
    assert data.startswith(b'(window.SMEVALS_DATA = window.SMEVALS_DATA || {})["qa/runs/x"] = ')
    assert jsdata.decode(data) == ("qa/runs/x", doc)


@pytest.mark.parametrize("text", [b"", b"alert(1)", b'SMEVALS_DATA["x"] = {};',
                                  b'(window.SMEVALS_DATA = window.SMEVALS_DATA || {})["x"] = {'])
def test_other_files_are_not_data_files(text: bytes) -> None:
    with pytest.raises(ValueError):
        jsdata.decode(text)


# --- artifacts ---------------------------------------------------------------------------


@pytest.mark.parametrize("path, ok", [
    ("output.txt", True), ("sub/dir/x.png", True), ("..", False), ("a/../b", False),
    ("/etc/passwd", False), ("a//b", False), ("./a", False), ("a\\..\\b", True),
    ("a\0b", False), ("", False), ("a/", False)])
def test_only_plain_inner_paths_are_opened(path: str, ok: bool) -> None:
    assert artifacts.safe_inner(path) is ok


@pytest.mark.parametrize("path, head, kind, name", [
    ("output.txt", b"hello", "text", "output.txt"),
    ("page.html", b"<script>alert(1)</script>", "text", "page.html.txt"),
    ("drawing.svg", b"<svg/>", "svg", "drawing.svg.txt"),
    ("dot.png", png(1, 1), "image", "dot.png"),
    ("photo.JPG", jpeg_head(640, 480), "image", "photo.JPG"),
    ("fake.png", b"<html><script>alert(1)</script>", "text", "fake.png.txt"),
    ("noise.jpg", b"\x00\x01\x02", "binary", "noise.jpg.bin"),
    ("bomb.png", png(1, 1)[:16] + bytes.fromhex("00004e2000004e20"), "binary", "bomb.png.bin"),
    ("cut.png", b"\x89PNG\r\n\x1a\n", "binary", "cut.png.bin"),
    ("favicon.ico", b"\x00\x00\x01\x00", "binary", "favicon.ico.bin"),
    ("drawing.svg", b"\x00<svg/>", "binary", "drawing.svg.bin"),
    ("blob", b"\x00\x01\x02", "binary", "blob.bin"),
    ("tool.exe", b"MZ\x90\x00", "binary", "tool.exe.bin"),
    ("../../x y<z>.md", "é".encode()[:1], "text", "x_y_z_.md.txt"),
])
def test_kinds_and_static_names(path: str, head: bytes, kind: str, name: str) -> None:
    assert artifacts.kind_of({"path": path}, head) == kind
    assert artifacts.static_name(path, kind) == name


def test_links_special_files_and_unreadable_files() -> None:
    assert artifacts.kind_of({"path": "s", "symlink": "/etc/passwd"}, None) == "link"
    assert artifacts.kind_of({"path": "f", "special": True}, None) == "special"
    assert artifacts.kind_of({"path": "gone.txt"}, None) == "missing"


@pytest.mark.parametrize("raw", [
    "/../etc/passwd", "/data/../../etc/passwd", "/data/%2e%2e/x.js", "/data/qa%2f..%2findex.js",
    "/files/qa/runs/x/%2E%2E/run.json", "/a/%00", "/a/%ff", "//etc/passwd",
    "http://example.com/", "/a/./b", "/data/"])
def test_request_paths_that_are_not_plain_names_are_refused(raw: str) -> None:
    assert split_path(raw) is None


def test_request_paths_are_decoded_once() -> None:
    assert split_path("/files/qa/runs/x/%252e%252e?v=3#top") == ["files", "qa", "runs", "x",
                                                                 "%2e%2e"]
    assert split_path("/") == []
    assert split_path("/data/qa/tasks/caf%C3%A9.js") == ["data", "qa", "tasks", "café.js"]
    # a backslash is a character of a POSIX file name: one segment, looked up by exact name
    assert split_path("/a/%5c..%5cb") == ["a", "\\..\\b"]


# --- page data agrees with the report ------------------------------------------------------


def test_the_leaderboard_is_the_reports(qa: Path) -> None:
    report = run_cli("report", str(qa), "--format", "json")
    assert report.code == 0, report.both
    [expected] = json.loads(report.out)["evals"]
    doc = eval_index(loaded_of(qa))
    board = [{k: v for k, v in g.items() if k != "mean_ci"} for g in doc["leaderboard"]]
    assert board == [{k: v for k, v in g.items() if k not in ("tasks", "checks")}
                     for g in expected["leaderboard"]]
    # the Checks table: per config x model, the report's figures for each Check
    checks = {(g["config"], g["model"]): {c["check"]: c for c in g["checks"]}
              for g in expected["leaderboard"]}
    columns = [(c["config"], c["model"]) for c in doc["grid"]["columns"]]
    shown = {(pair, row["check"]): {k: v for k, v in cell.items() if k != "text"}
             for row in doc["checks"] for pair, cell in zip(columns, row["columns"], strict=True)
             if cell is not None}
    assert shown and shown == {(pair, name): figures for pair, by_name in checks.items()
                               for name, figures in by_name.items()}
    summary = {k: v for k, v in doc["summary"].items() if k != "mean_ci"}
    assert summary == expected["summary"]
    assert [t["tag"] for t in doc["tags"]] == [t["tag"] for t in expected["tags"]]


def test_the_grid_has_every_task_and_column_with_classes(qa: Path) -> None:
    grid = eval_index(loaded_of(qa))["grid"]
    columns = [(c["config"], c["model"]) for c in grid["columns"]]
    # tiny's Grade has no score: the leaderboard (and so the columns) go by pass rate
    assert columns == [("default", "medium"), ("alt", "small"), ("default", "small"),
                       ("default", "large"), ("default", "tiny")]
    assert grid["tasks"] == ["alpha", "beta", "delta", "gamma"]
    small: dict[str, Any] = {task: row[2]
                             for task, row in zip(grid["tasks"], grid["cells"], strict=True)}
    assert small["beta"] == {"runs": 3, "passed": 3, "mean": pytest.approx(0.6), "scored": 3,
                             "class": "stable_pass", "excluded": 0}
    assert small["gamma"]["class"] == "flaky" and small["gamma"]["passed"] == 2
    assert small["delta"]["class"] == "single"
    tiny = {task: row[4] for task, row in zip(grid["tasks"], grid["cells"], strict=True)}
    assert tiny["beta"] == {"runs": 0, "passed": 0, "mean": None, "class": None, "excluded": 1}


def test_a_tag_view_counts_only_the_tagged_rows(qa: Path) -> None:
    view = tag_view(loaded_of(qa), "hat")
    assert [g["model"] for g in view["leaderboard"]] == ["medium"]
    assert view["summary"]["graded"] == 1


def test_a_task_page_shows_every_run_with_its_status(qa: Path) -> None:
    page = task_page(loaded_of(qa), "beta")
    statuses = {(c["config"], c["model"]): [r["status"] for r in c["runs"]]
                for c in page["columns"]}
    assert statuses == {("default", "small"): ["pass", "pass", "pass"],
                        ("default", "large"): ["fail"], ("alt", "small"): ["pass"],
                        ("default", "tiny"): ["failed"]}
    assert page["doc"] == {"name": "beta", "prompt": "What is beta?"}
    assert page["columns"][0]["runs"][0]["output"] == {
        "text": "small answers beta (sample 0)\n", "truncated": False}


def test_a_run_page_has_the_grade_history_newest_first(qa: Path) -> None:
    loaded = loaded_of(qa)
    run = next(r for r in loaded.runs
               if r.record["task"]["name"] == "gamma" and r.record["model"] == "small"
               and r.record["sample"] == 0)
    page = run_page(loaded, run, ServeLinker("qa"))
    assert [(g["outcome"], g["current"], g["counts"]) for g in page["grades"]] == [
        ("pass", True, True), ("fail", False, False)]
    assert page["grade_id"] == page["grades"][0]["id"]
    assert page["output"] == {"text": "small answers gamma (sample 0)\n", "truncated": False}
    [output] = page["files"]
    assert output["href"] == f"files/qa/runs/{run.id}/output.txt"
    assert page["grades"][0]["files"][0]["preview"]["text"].startswith("checks:")


def test_the_index_of_10000_runs_is_small(tmp_path: Path) -> None:
    doc = eval_index(big_eval(tmp_path))
    assert doc["summary"]["graded"] == 10_000
    assert len(doc["grid"]["tasks"]) == 100 and len(doc["grid"]["columns"]) == 10
    assert len(jsdata.encode("big/index", doc)) < 200_000


def test_a_run_page_lists_the_labels_newest_first(tmp_path: Path) -> None:
    make_eval(tmp_path / "ev", tasks={"one": "prompt: hello one\n"})
    assert run_cli("run", "ev", "-g", cwd=tmp_path).code == 0
    [run_json] = (tmp_path / "ev" / "results" / "runs").rglob("run.json")
    run_id = run_json.parent.name
    for verdict, by, note in (("fail", "Ada", "<b>too short</b>"), ("pass", "Grace", "")):
        args = ["label", run_id, verdict, "ev", "--by", by, *(["--note", note] if note else [])]
        assert run_cli(*args, cwd=tmp_path).code == 0
    loaded = loaded_of(tmp_path / "ev")
    [run] = loaded.runs
    page = run_page(loaded, run, ServeLinker("ev"))
    assert [(lab["outcome"], lab["by"], lab["note"], lab["counts"]) for lab in page["labels"]] \
        == [("pass", "Grace", "", True), ("fail", "Ada", "<b>too short</b>", False)]
    assert page["status"] == "pass"             # labels never count as the grader's Grade
