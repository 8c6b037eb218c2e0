"""Shared fixtures: run the real `smevals` command, and build Evals in a temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fake_openai import FakeOpenAI

SMEVALS = str(Path(sys.executable).parent / "smevals")


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def both(self) -> str:
        return self.out + self.err


@pytest.fixture(autouse=True)
def _isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMEVALS_CACHE_DIR", str(tmp_path / "_cache"))
    monkeypatch.delenv("SMEVALS_STORE", raising=False)
    monkeypatch.delenv("SMEVALS_DEBUG", raising=False)
    monkeypatch.delenv("SMEVALS_CHROMIUM", raising=False)          # read by tests/web at import
    monkeypatch.delenv("SMEVALS_REQUIRE_BROWSER", raising=False)
    monkeypatch.setenv("COLUMNS", "100")


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 120) -> Result:
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run([SMEVALS, *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli():
    return run_cli


def write(path: Path, text: str, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    if executable:
        path.chmod(0o755)
    return path


ECHO_RUNNER = """
#!/bin/sh
printf '%s says: %s\\n' "$SMEVALS_MODEL" "$SMEVALS_PROMPT"
"""


def make_eval(root: Path, tasks: dict[str, str] | None = None,
              configs: dict[str, str] | None = None, graders: dict[str, str] | None = None,
              files: dict[str, str] | None = None, name: str | None = None) -> Path:
    """An Eval folder: `tasks`, `configs`, `graders` map names to YAML text; `files` maps
    relative paths to content (files starting with `#!` are made executable)."""
    write(root / "eval.yaml", f"name: {name}\n" if name else "description: test eval\n")
    tasks = {"one": "prompt: hello one\n", "two": "prompt: hello two\n"} if tasks is None else tasks
    configs = {"default": "runner: ./echo.sh\nmodel: m1\n"} if configs is None else configs
    files = {"configs/echo.sh": ECHO_RUNNER} if files is None else files
    graders = ({"default": "checks:\n  - checker: contains\n    value: says\n"}
               if graders is None else graders)
    for kind, docs in (("tasks", tasks), ("configs", configs), ("graders", graders)):
        for stem, text in docs.items():
            write(root / kind / f"{stem}.yaml", text)
    for rel, text in files.items():
        body = textwrap.dedent(text).lstrip("\n")
        write(root / rel, body, executable=body.startswith("#!"))
    return root


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A scriptable OpenAI-compatible server on 127.0.0.1."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def evaldir(tmp_path: Path) -> Path:
    return make_eval(tmp_path / "ev")
