"""Fixtures for the built-in Runners: a fake OpenAI-compatible server and a BuiltinContext maker."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from smevals.runners import BuiltinContext

MakeContext = Callable[..., BuiltinContext]


@pytest.fixture
def make_ctx(tmp_path: Path) -> MakeContext:
    """A BuiltinContext on tmp_path: make_ctx(config, task, model=..., sample_index=..., ...)."""

    def make(config: dict[str, Any], task: dict[str, Any], **overrides: Any) -> BuiltinContext:
        workspace = tmp_path / "workspace"
        workspace.mkdir(exist_ok=True)
        fields: dict[str, Any] = {
            "config": {"name": "cfg", "model": "m1", **config},
            "config_dir": tmp_path,
            "task": task,
            "model": config.get("model", "m1"),
            "sample_index": 0,
            "workspace": workspace,
            "timeout": None,
            "environ": {},
            "cancel": threading.Event(),
        }
        fields.update(overrides)
        return BuiltinContext(**fields)

    return make
