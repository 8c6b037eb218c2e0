"""Fixtures for report and diff: the deterministic "qa" store, a git history of it, and
golden-file comparison (SMEVALS_UPDATE_GOLDEN=1 rewrites the golden files)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import Result, run_cli
from tests.report.builder import history, make_qa, state1

GOLDEN = Path(__file__).parent / "golden"
EPOCH = "1767322800"          # 2026-01-02T03:00:00Z: the report's "Generated" line


def smevals(*args: str, cwd: Path) -> Result:
    return run_cli(*args, cwd=cwd, env={"SOURCE_DATE_EPOCH": EPOCH})


@pytest.fixture
def qa(tmp_path: Path) -> Path:
    """The qa Eval in state 1 (no git), under tmp_path/work/qa."""
    root = make_qa(tmp_path / "work" / "qa")
    state1(root)
    return root


@pytest.fixture(scope="session")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repository with four commits of the qa Eval (see builder.history); read only."""
    root = tmp_path_factory.mktemp("repo") / "repo"
    root.mkdir()
    history(root)
    return root


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("SMEVALS_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    assert path.exists(), f"missing golden file {path}: run with SMEVALS_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


@pytest.fixture
def golden() -> Callable[[str, str], None]:
    return check_golden
