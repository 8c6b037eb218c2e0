"""The pages whose Python blocks run (docs/analysis.md, marked by the comment below): every
console and Python block in order, in one scratch folder, each Python block's output
compared with the ```text block after it; the plot the page shows is drawn again and
checked (SMEVALS_UPDATE_GOLDEN=1 copies it into docs/img/)."""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

from tests.helpers.docpages import ROOT, blocks, console, matches, new_scratch, python

MARKER = "<!-- The console and Python blocks of this page run, in order, in " \
    "tests/test_docs_python.py. -->"
PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md") if MARKER in p.read_text())
# The pictures a page draws: (page, the file its code writes, the copy the page shows).
PICTURES = {"docs/analysis.md": [("pass-rate-by-task.png",
                                  "docs/img/analysis-pass-rate-by-task.png")]}


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_analysis_page_is_run() -> None:
    assert [p.relative_to(ROOT).as_posix() for p in PAGES] == ["docs/analysis.md"]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_page_runs_as_shown(page: Path, tmp_path: Path) -> None:
    scratch = new_scratch(tmp_path)
    found = blocks(page.read_text())
    assert any(b.kind == "python" for b in found)
    problems: list[str] = []
    for i, block in enumerate(found):
        if block.kind == "console":
            problems += console(scratch, block)
        elif block.kind == "python":
            printed = python(scratch, block).splitlines()
            shown = found[i + 1].body.splitlines() \
                if i + 1 < len(found) and found[i + 1].kind == "text" else []
            if not matches(shown, printed):
                problems.append(f"line {block.line}: the Python block printed\n"
                                + "\n".join(printed))
    assert problems == []
    rel = page.relative_to(ROOT).as_posix()
    for drawn, shown_at in PICTURES.get(rel, []):
        made = (tmp_path / drawn).read_bytes()
        width, height = png_size(made)
        assert width >= 300 and height >= 200
        committed = ROOT / shown_at
        if os.environ.get("SMEVALS_UPDATE_GOLDEN") == "1":
            committed.parent.mkdir(exist_ok=True)
            shutil.copyfile(tmp_path / drawn, committed)
        assert png_size(committed.read_bytes()) == (width, height)
        assert f"]({Path(shown_at).relative_to('docs').as_posix()})" in page.read_text()


def test_a_python_block_that_prints_otherwise_fails(tmp_path: Path) -> None:
    """The runner compares: a block whose output differs from its text block is a
    problem, and so is a console command whose output differs."""
    scratch = new_scratch(tmp_path)
    page = "```python\nprint('one')\n```\n\n```text\ntwo\n```\n"
    block = blocks(page)[0]
    assert python(scratch, block).splitlines() == ["one"]
    assert not matches(blocks(page)[1].body.splitlines(), ["one"])
    bad = blocks("```console\n$ echo hi\nho\n```\n")[0]
    assert console(scratch, bad) != []
    good = blocks("```console\n$ echo hi\nhi\n$ false\n# exit 1\n```\n")[0]
    assert console(scratch, good) == []
