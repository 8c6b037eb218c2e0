"""Every link between the manual's pages that names an anchor (`diff.md#history-smevals-log`,
`#same-page`) names a heading that exists, whatever MkDocs version is installed: the
headings' ids are worked out here as Python-Markdown's `toc` extension (mkdocs.yml) makes
them, not by asking MkDocs, whose anchor check is a warning in some versions and absent in
others (`diff.md#history` passed one and failed another: issue 37).
"""

from __future__ import annotations

import html
import re
import unicodedata
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def prose(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1."""
    out, fence = [], ""
    for number, line in enumerate(text.splitlines(), 1):
        found = FENCE.match(line)
        if fence:
            if found and found.group(1)[0] == fence[0] and len(found.group(1)) >= len(fence):
                fence = ""
            continue
        if found:
            fence = found.group(1)
            continue
        out.append((number, line))
    return out


def heading_text(raw: str) -> str:
    """A heading's text as the rendered page has it: code spans keep their content, links
    their text, emphasis marks go, entities are read."""
    parts = re.split(r"(`+[^`]*`+)", raw)               # code spans: kept as written
    for i, part in enumerate(parts):
        if part.startswith("`"):
            parts[i] = part.strip("`")
            continue
        part = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", part)
        part = re.sub(r"(\*\*|\*)(?=\S)(.+?)(?<=\S)\1", r"\2", part)
        part = re.sub(r"(?<!\w)(__|_)(?=\S)(.+?)(?<=\S)\1(?!\w)", r"\2", part)
        parts[i] = re.sub(r"<[^>]+>", "", part)
    return html.unescape("".join(parts))


def slugify(value: str, separator: str = "-") -> str:
    """Python-Markdown's toc `slugify` (the default mkdocs.yml keeps): ASCII by NFKD, word
    characters, spaces and hyphens kept, lower case, runs of spaces and hyphens joined."""
    value = unicodedata.normalize("NFKD", value).encode("ascii", "ignore").decode("ascii")
    value = re.sub(r"[^\w\s-]", "", value).strip().lower()
    return re.sub(rf"[{separator}\s]+", separator, value)


def anchors(page: Path) -> set[str]:
    """The ids of a page's headings; a repeated one gets `_1`, `_2` ... as toc gives it."""
    seen: set[str] = set()
    for _number, line in prose(page.read_text(encoding="utf-8")):
        found = HEADING.match(line)
        if not found:
            continue
        base = slugify(heading_text(found.group(2)))
        anchor, n = base, 0
        while anchor in seen:
            n += 1
            anchor = f"{base}_{n}"
        seen.add(anchor)
    return seen


def links(page: Path) -> list[tuple[int, str, str]]:
    """(line, page linked, anchor) of every link to a page of the manual with an anchor."""
    out = []
    for number, line in prose(page.read_text(encoding="utf-8")):
        line = re.sub(r"`[^`]*`", "", line)              # inline code is not a link
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or "#" not in target:
                continue
            path, _, anchor = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            out.append((number, str(linked), anchor))
    return out


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_every_anchor_a_page_links_to_exists(page: Path) -> None:
    missing = []
    for number, linked, anchor in links(page):
        target = Path(linked)
        shown = target.relative_to(DOCS).as_posix() if target.is_relative_to(DOCS) else linked
        if not target.is_file():
            missing.append(f"{number}: {shown} does not exist")
        elif anchor not in anchors(target):
            missing.append(f"{number}: {shown} has no heading whose anchor is #{anchor}")
    assert missing == []


def test_the_slugs_are_those_python_markdown_makes() -> None:
    """The rule above against the Markdown library MkDocs renders with, when installed, on
    every heading of the manual (nothing to compare with otherwise)."""
    markdown = pytest.importorskip("markdown")
    for page in pages():
        rendered = markdown.markdown(page.read_text(encoding="utf-8"),
                                     extensions=["toc", "tables", "admonition",
                                                 "pymdownx.superfences"])
        made = set(re.findall(r'<h[1-6] id="([^"]+)"', rendered))
        assert made == anchors(page), page.name


@pytest.mark.parametrize(("heading", "anchor"), [
    ("History: `smevals log`", "history-smevals-log"),
    ("`extract: json` — pull the JSON out of chatty output",
     "extract-json-pull-the-json-out-of-chatty-output"),
    ("A Suite's summary", "a-suites-summary"),
    ("Grader and evidence: what **changed**", "grader-and-evidence-what-changed"),
])
def test_slugify(heading: str, anchor: str) -> None:
    assert slugify(heading_text(heading)) == anchor


def test_a_link_to_a_missing_anchor_is_caught(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\n## History: `smevals log`\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("See [log](a.md#history) and [it](a.md#history-smevals-log)"
                                   ".\n\n```\n[not a link](a.md#nothing)\n```\n",
                                   encoding="utf-8")
    found = [(n, anchor, anchor in anchors(Path(linked)))
             for n, linked, anchor in links(tmp_path / "b.md")]
    assert found == [(1, "history", False), (1, "history-smevals-log", True)]
