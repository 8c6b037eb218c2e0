"""Fixtures for report, diff and log (tests/report, tests/diff, tests/history, whose
conftest.py each name them): the deterministic "qa" store, a git history of it, and
golden-file comparison against the `golden/` folder beside the test module
(SMEVALS_UPDATE_GOLDEN=1 rewrites the golden files)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import Result, run_cli
from tests.helpers.qa import history, make_qa, state1

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


def check_golden(folder: Path, name: str, text: str) -> None:
    path = folder / name
    if os.environ.get("SMEVALS_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")
    assert path.exists(), f"missing golden file {path}: run with SMEVALS_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """Compare a text with the file `name` of the test module's `golden/` folder."""
    return functools.partial(check_golden, request.path.parent / "golden")
