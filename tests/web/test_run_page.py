"""The Run page (issue 37): a judge's turn shows the images it was sent (the thumbnail of the
file whose sha256 the judge request names, beside the user message, not only under
Artifacts); the workspace diff's header counts every file it lists (a binary file and a
link have no `+++` line), and generated noise is not among them."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.helpers import make_eval, run_cli
from tests.web.agentish import AgentSite
from tools.imagefiles import png

CHART = png(40, 20)
RUNNER = """\
#!/bin/sh
printf '%s\\n' "a chart of $SMEVALS_TASK"
cp "$SMEVALS_EVAL_DIR/configs/chart.png" chart.png
"""
GRADER = """
checks:
  - checker: llm_judge
    name: looks
    rubric: Does the chart show the data?
    images: chart.png
    judge: {backend: replay, responses: answers.jsonl}
"""
ANSWERS = '{"check": "looks", "verdict": {"reason": "it does", "pass": true}}\n'


def build(root: Path) -> AgentSite:
    env = {"SMEVALS_CACHE_DIR": str(root / "cache"), "SOURCE_DATE_EPOCH": "1767322800"}
    ev = make_eval(root / "charts", name="charts", tasks={"bars": "prompt: draw bars\n"},
                   configs={"default": "runner: ./draw.sh\nmodel: m1\n"},
                   graders={"default": GRADER},
                   files={"configs/draw.sh": RUNNER, "graders/answers.jsonl": ANSWERS})
    (ev / "configs" / "chart.png").write_bytes(CHART)
    made = run_cli("run", str(ev), "-g", env=env)
    assert made.code == 0, made.both
    built = run_cli("build", "-o", str(root / "site"), str(ev), env=env)
    assert built.code == 0, built.both
    return AgentSite(ev, root / "site", env)


def test_the_judge_turn_shows_the_image_it_was_sent(tmp_path: Path, open_page) -> None:
    site = build(tmp_path)
    run_id = site.data("charts/explore")["runs"][0]["id"]
    page_data = site.data(f"charts/runs/{run_id}")
    (judged,) = [t for t in page_data["timelines"] if t["title"] == "Judge: looks"]
    user = next(e for e in judged["entries"] if e.get("role") == "user")
    (image,) = user["images"]
    assert (image["name"], image["sha256"], image["missing"]) == (
        "chart.png", hashlib.sha256(CHART).hexdigest(), False)
    assert image["path"] == "chart.png" and image["src"]

    w = open_page(site.index)
    w.page.goto(f"{site.index}#/charts/run/{run_id}")
    w.page.wait_for_selector("#s-judge-looks ol.timeline")
    thumb = w.page.locator("#s-judge-looks li.tl-user .tl-images img.thumb")
    assert thumb.count() == 1
    assert thumb.get_attribute("alt") == "chart.png"
    assert w.page.evaluate("document.querySelector('#s-judge-looks img.thumb').naturalWidth") == 40
    w.shot("judge-images")
    w.clean()


def test_an_image_no_file_has_is_named_not_shown(tmp_path: Path) -> None:
    """The judge was sent an image whose file the Run no longer lists: named, no src."""
    from smevals.site.timeline import clean, judge_entries

    doc = {"calls": [{"request": {"messages": [{"role": "user", "content": "look"}]},
                      "images": [{"name": "gone.png", "sha256": "ab" * 32,
                                  "media_type": "image/png", "bytes": 10,
                                  "src": "javascript:alert(1)"}],
                      "content": "{}", "verdict": {"pass": True}}]}
    entries = [clean(e) for e in judge_entries(doc, {})]
    user = entries[0]
    assert user["images"] == [{"name": "gone.png", "sha256": "ab" * 32,
                               "media_type": "image/png", "missing": True}]


AGENT = r"""
#!/bin/sh
printf 'x = 2\n' > a.py
printf '\000\001' > blob.bin
ln -s /etc/hostname link
mkdir -p __pycache__ && printf 'noise' > __pycache__/a.cpython-311.pyc
echo done
"""


def test_the_workspace_diff_header_counts_the_files_it_lists(tmp_path: Path,
                                                             open_page) -> None:
    env = {"SMEVALS_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1767322800"}
    ev = make_eval(tmp_path / "work", name="work",
                   tasks={"edit": "prompt: edit a.py\nworkspace: start\n"},
                   configs={"default": "runner: ./agent.sh\nmodel: m1\n"},
                   files={"configs/agent.sh": AGENT, "start/a.py": "x = 1\n"})
    assert run_cli("run", str(ev), env=env).code == 0
    assert run_cli("build", "-o", str(tmp_path / "site"), str(ev), env=env).code == 0
    site = AgentSite(ev, tmp_path / "site", env)
    run_id = site.data("work/explore")["runs"][0]["id"]
    w = open_page(site.index)
    w.page.goto(f"{site.index}#/work/run/{run_id}")
    w.page.wait_for_selector("#s-workspace-diff pre.diff")
    text = w.page.locator("#s-workspace-diff").inner_text()
    assert "3 files changed · +1 −1 lines · raw file" in text
    assert "pycache" not in text and "pyc" not in w.page.locator("#s-artifacts").inner_text()
    w.clean()
