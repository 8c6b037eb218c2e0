"""The documentation site: generated pages up to date, every page in the navigation, and
statements about the code checked against the code."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from docs import gen
from smevals.checkers import checker_names
from smevals.cli import cli
from smevals.store.layout import slug

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


@pytest.mark.parametrize("rel", sorted(gen.PAGES))
def test_the_generated_page_is_up_to_date(rel: str) -> None:
    """Fails when a command, an option, a help text or a checker changed without
    `python -m docs.gen`."""
    assert (ROOT / rel).read_text() == gen.PAGES[rel](), f"{rel} is out of date: python -m docs.gen"


def test_the_generator_does_not_depend_on_the_terminal(tmp_path: Path) -> None:
    env = {**os.environ, "COLUMNS": "40", "LINES": "10"}
    proc = subprocess.run([sys.executable, "-m", "docs.gen", "--check"], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    assert (proc.returncode, proc.stderr) == (0, "")


def command_names(group: click.Group, prefix: str = "") -> list[str]:
    """Every visible command and sub-command of `group`, as typed after `smevals`."""
    out: list[str] = []
    for name, command in sorted(group.commands.items()):
        if command.hidden:
            continue
        out.append(prefix + name)
        if isinstance(command, click.Group):
            out += command_names(command, f"{prefix}{name} ")
    return out


def test_the_cli_reference_has_every_command() -> None:
    text = (DOCS / "reference" / "cli.md").read_text()
    names = command_names(cli)
    assert {"run", "grade", "report", "import ai-eval-forge"} <= set(names)
    for command in names:
        assert f"\n## smevals {command}\n" in text, command
        assert f"Usage: smevals {command} [OPTIONS]" in text, command


def test_every_checker_has_its_section_in_the_guide_and_the_reference() -> None:
    guide = (DOCS / "checkers.md").read_text()
    reference = (DOCS / "reference" / "checkers.md").read_text()
    count = len(checker_names())
    assert f"smevals ships {count} built-in Checkers" in guide
    assert f"the {count} checkers and their options" in (ROOT / "README.md").read_text()
    for name in checker_names():
        assert f"`{name}`" in guide, name
        assert f"\n## {name}\n" in reference, name


def nav_pages(nav: list[Any]) -> list[str]:
    out: list[str] = []
    for entry in nav:
        for value in (entry.values() if isinstance(entry, dict) else [entry]):
            out += nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_every_page_is_in_the_navigation_and_every_entry_exists() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    listed = nav_pages(config["nav"])
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(listed) == pages


def test_the_folder_names_shown_in_the_store_page_are_those_the_store_makes() -> None:
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|$", (DOCS / "store.md").read_text(), re.M)
    assert len(rows) >= 5
    assert [(name, slug(name)) for name, _ in rows] == rows


def test_every_module_the_development_page_names_exists() -> None:
    """docs/development.md's module map and the path of a `diff` and a `grade` call name
    modules by path: each must be there, so the page follows the code."""
    text = (ROOT / "docs" / "development.md").read_text()
    named = sorted(set(re.findall(r"smevals/[\w/]+\.py", text)))
    assert len(named) > 30
    assert [n for n in named if not (ROOT / "src" / n).is_file()] == []
    section = text[text.index("### How a call travels"):text.index("## Tests and CI")]
    assert "smevals/commands/diff.py" in section and "smevals/commands/grade.py" in section
def test_the_performance_page_counts_the_shipped_fixtures() -> None:
    """bench/fixtures.py times `smevals test` over every fixture of suites/: the page says
    how many there are."""
    count = len(list((ROOT / "suites").glob("*/graders/*.fixtures/*.yaml")))
    assert count >= 40
    assert f"over the shipped suites' {count} fixtures" in (DOCS / "performance.md").read_text()
