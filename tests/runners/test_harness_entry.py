"""The harness runners (codex, claude-code, pi) declare only their HARNESS: its
config_problems, preflight and run are the built-in runner's entry points, found by
smevals.runners, with no adapter block repeated in each module."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from smevals import runners
from smevals.runners.harness import Harness

HARNESSES = ["codex", "claude-code", "pi"]


@pytest.mark.parametrize("name", HARNESSES)
def test_a_harness_module_declares_only_its_harness(name: str, tmp_path: Path) -> None:
    module = importlib.import_module(runners.BUILTINS[name][0])
    assert isinstance(module.HARNESS, Harness)
    assert [attr for attr in ("config_problems", "preflight", "run") if hasattr(module, attr)] \
        == []
    problems = runners.config_problems(name, {"nonsense": 1})
    assert [field for field, _message in problems] == ["nonsense"]
    missing = runners.preflight(name, {"executable": str(tmp_path / "none")}, tmp_path, {})
    assert missing is not None and str(tmp_path / "none") in missing
