"""`smevals build`: the static site's layout, its safety, refreshing one Eval in place,
--rev and --diff, and bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from smevals.site import jsdata
from smevals.site.build import ASSETS, asset
from tests.helpers import run_cli
from tests.helpers.qa import Builder, make_qa, state1, state3
from tests.helpers.web.site import EPOCH, Sites


def data(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = jsdata.decode(path.read_bytes())[1]
    return out


def build(*args: str, cwd: Path | None = None):
    return run_cli("build", *args, cwd=cwd, env={"SOURCE_DATE_EPOCH": EPOCH})


def test_the_site_is_split_per_eval_and_page(sites: Sites) -> None:
    site = sites.site
    for name in [*ASSETS, "data/index.js", "data/qa/index.js", "data/qa/diff.js",
                 "data/qa/explore.js",
                 "data/qa/tags/hat.js", "data/qa/tasks/beta.js", "data/hostile/index.js"]:
        assert (site / name).is_file(), name
    assert len(list((site / "data" / "qa" / "runs").glob("*.js"))) == 24
    index = data(site / "data" / "index.js")
    assert [e["slug"] for e in index["evals"]] == ["hostile", "qa"]
    assert index["live"] is False
    assert index["generated"] == "2026-01-02T03:00:00Z"


def test_the_app_needs_no_network_and_no_html_parsing() -> None:
    html = asset("index.html").decode()
    refs = set(re.findall(r'(?:src|href)="([^"]*)"', html))
    assert refs == {"app.css", "app.js", "explore.js", "timeline.js", "data:,", "#/"}
    scripts = [name for name in ASSETS if name.endswith(".js")]
    for name in [*scripts, "app.css"]:
        text = asset(name).decode()
        assert set(re.findall(r"[a-z]+://[^\s\"')]+", text)) <= {"http://www.w3.org/2000/svg"}
    for name in scripts:
        script = asset(name).decode()
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
                     "new Function", "setAttribute(\"on", "DOMParser", "createContextualFragment"):
            assert sink not in script, (name, sink)


def test_hostile_files_are_copied_under_names_no_browser_runs(sites: Sites) -> None:
    [run_file] = (sites.site / "data" / "hostile" / "runs").glob("*.js")
    files = {f["path"]: f for f in data(run_file)["files"]}
    assert files["page.html"]["href"].endswith("/page.html.txt")
    assert files["blob.bin"]["href"].endswith("/blob.bin.bin")
    assert files["dot.png"]["src"] == files["dot.png"]["href"]
    assert files["evil.svg"]["href"].endswith("/evil.svg.txt")      # the original, as text
    assert files["evil.svg"]["src"].endswith("/evil.svg")            # its sanitised copy
    sanitised = (sites.site / files["evil.svg"]["src"]).read_text()
    assert sanitised == ('<svg xmlns="http://www.w3.org/2000/svg" width="60" height="60">\n\n'
                         '<rect width="60" height="60" fill="tomato"></rect></svg>')
    assert (files["secret"]["kind"], files["secret"]["target"]) == ("link", "/etc/passwd")
    assert "href" not in files["secret"]
    copied = [p for p in (sites.site / "files").rglob("*") if p.is_file() or p.is_symlink()]
    assert copied and not any(p.is_symlink() for p in copied)
    assert not any(p.suffix in (".html", ".js", ".htm", ".xhtml") for p in copied)
    svgs = [p.read_text() for p in copied if p.suffix == ".svg"]
    assert len(svgs) == 2                                            # evil.svg, made.svg
    assert not any(word in svg for svg in svgs for word in ("script", "onload", "PWNED"))


def test_files_are_stored_once_per_content(sites: Sites) -> None:
    graders = list((sites.site / "files" / "qa").rglob("grader.yaml.txt"))
    assert len(graders) == 2            # two grader versions, dozens of Grades


def two_evals(root: Path) -> tuple[Path, Path, Builder]:
    first = make_qa(root / "qa")
    builder = state1(first)
    second = make_qa(root / "other")
    state1(second)
    (second / "eval.yaml").write_text("name: other\n")
    return first, second, builder


def test_building_one_eval_refreshes_it_and_keeps_the_others(tmp_path: Path) -> None:
    first, second, builder = two_evals(tmp_path)
    site = tmp_path / "site"
    assert build(str(first), str(second), "-o", str(site)).code == 0
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns)
              for p in site.rglob("*") if p.is_file() and "other" in p.parts}
    assert before
    state3(builder)
    res = build(str(first), "-o", str(site))
    assert res.code == 0, res.both
    assert res.out == (f"qa: 24 run(s) -> {site}/data/qa\nSite: {site}/index.html\n")
    after = {p: (p.read_bytes(), p.stat().st_mtime_ns)
             for p in site.rglob("*") if p.is_file() and "other" in p.parts}
    assert after == before
    index = data(site / "data" / "index.js")
    assert [(e["slug"], e["runs"]) for e in index["evals"]] == [("other", 21), ("qa", 24)]
    assert not list(site.glob(".build-*"))


def test_a_folder_that_is_not_a_site_is_left_alone(tmp_path: Path) -> None:
    qa = make_qa(tmp_path / "qa")
    state1(qa)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    res = build(str(qa), "-o", str(mine))
    assert res.code == 2
    assert "the folder is not empty and holds no smevals site" in res.err
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("args, message", [
    (["nowhere"], "nowhere: no such file or folder"),
    (["{qa}", "-g", "strict"], "no grader named 'strict'"),
    (["{qa}", "--diff", "HEAD", "{qa}"], "is a folder, not a git revision"),
])
def test_bad_input_exits_2(tmp_path: Path, args: list[str], message: str) -> None:
    qa = make_qa(tmp_path / "qa")
    state1(qa)
    res = build(*[a.format(qa=qa) for a in args], "-o", str(tmp_path / "site"))
    assert res.code == 2, res.both
    assert message in res.err
    assert "Traceback" not in res.err


def test_a_site_of_a_revision(sites: Sites, tmp_path: Path) -> None:
    res = build("--rev", "HEAD~1", str(sites.qa), "-o", str(tmp_path / "site"), cwd=sites.repo)
    assert res.code == 0, res.both
    index = data(tmp_path / "site" / "data" / "qa" / "index.js")
    assert index["summary"]["runs"] == 21 and index["rev"] == "HEAD~1"
    assert "huge" not in [g["model"] for g in index["leaderboard"]]


def test_the_diff_page_has_the_data_of_smevals_diff(sites: Sites) -> None:
    res = run_cli("diff", "HEAD~2", "HEAD~1", str(sites.qa), "--format", "json", cwd=sites.repo)
    doc = data(sites.site / "data" / "qa" / "diff.js")
    assert doc["diff"] == json.loads(res.out)["evals"][0]
    assert [f["task"] for f in doc["diff"]["flips"]] == ["beta", "gamma"]


def test_builds_are_reproducible(tmp_path: Path) -> None:
    qa = make_qa(tmp_path / "qa")
    state1(qa)
    for out in ("a", "b"):
        assert build(str(qa), "-o", str(tmp_path / out)).code == 0
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*"))
    assert files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*"))
    for rel in files:
        if (tmp_path / "a" / rel).is_file():
            assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes()


def _backslash_eval(tmp_path: Path) -> Path:
    """An Eval with one Run whose runner wrote `back\\slash.txt`."""
    from tests.helpers import make_eval

    runner = "#!/bin/sh\nprintf 'in a file\\n' > 'back\\slash.txt'\necho says\n"
    ev = make_eval(tmp_path / "ev", configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   tasks={"one": "prompt: p\n"}, files={"configs/r.sh": runner})
    assert run_cli("run", str(ev), "-g", cwd=tmp_path).code == 0
    return ev


def test_a_file_name_with_a_backslash_is_a_plain_file(tmp_path: Path) -> None:
    ev = _backslash_eval(tmp_path)
    assert build(str(ev), "-o", "site", cwd=tmp_path).code == 0
    [run_file] = (tmp_path / "site" / "data" / "ev" / "runs").glob("*.js")
    files = {f["path"]: f for f in data(run_file)["files"]}
    entry = files["back\\slash.txt"]
    assert (entry["kind"], entry["preview"]) == ("text", {"text": "in a file\n",
                                                          "truncated": False})
    assert entry["href"].endswith("/back_slash.txt")
    assert (tmp_path / "site" / entry["href"]).read_text() == "in a file\n"


def test_serve_serves_a_file_whose_name_holds_a_backslash(tmp_path: Path) -> None:
    from urllib.parse import quote

    from smevals.commands.serve import make_server
    from smevals.site.load import SiteOptions
    from tests.helpers.web.pages import fetch
    from tests.helpers.web.site import start

    ev = _backslash_eval(tmp_path)
    (run_dir,) = (ev / "results" / "runs").glob("*/*/*/*")
    server = start(make_server(SiteOptions((str(ev),)), "127.0.0.1", 0))
    try:
        path = f"/files/ev/runs/{run_dir.name}/{quote('back' + chr(92) + 'slash.txt')}"
        status, _headers, body = fetch(server, path)
        assert (status, body) == (200, b"in a file\n")
        assert fetch(server, f"/files/ev/runs/{run_dir.name}/..%5Coutput.txt")[0] == 404
    finally:
        server.shutdown()
        server.server_close()
