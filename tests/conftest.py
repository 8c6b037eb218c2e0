"""Shared fixtures: run `smevals` (in this process, or as a real process where that matters),
and build Evals in a temporary folder. The helpers themselves live in tests/helpers, and
tests import them from there."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import Result, make_eval, run_cli, run_cli_process
from tools.fake_openai import FakeOpenAI

# Python's bytecode caches are written (into __pycache__, which git ignores) even where
# PYTHONDONTWRITEBYTECODE is set, as pytest and Python do by default: the test processes,
# and the smevals processes they start, then compile smevals and pytest's rewritten tests
# once per checkout instead of once per process (the rewriting alone is about 4 s of CPU
# in each test process). The test processes pytest-xdist starts inherit the environment.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

# Property tests run real code on a loaded machine: no per-example deadline, and a slow
# example is not a failed health check. Every @given test uses this profile.
settings.register_profile("smevals", deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("smevals")


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A cache folder of this test process for module and session fixtures (each test has
    its own, below): no test reads or fills the user's cache, and parallel test processes
    (pytest-xdist) never share one."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SMEVALS_CACHE_DIR", str(tmp_path_factory.mktemp("session-cache")))
        yield


@pytest.fixture(autouse=True)
def _isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SMEVALS_CACHE_DIR", str(tmp_path / "_cache"))
    monkeypatch.delenv("SMEVALS_STORE", raising=False)
    monkeypatch.delenv("SMEVALS_DEBUG", raising=False)
    monkeypatch.delenv("SMEVALS_CHROMIUM", raising=False)          # read by tests/site at import
    monkeypatch.delenv("SMEVALS_REQUIRE_BROWSER", raising=False)
    monkeypatch.setenv("COLUMNS", "100")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: up to twice as many test processes as cores (four more at most). Many
    tests spend their time waiting on a child process, a socket, a browser or a sleep: on 2
    cores, 4 processes run the suite in less time than 2."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)
    return cores + min(cores, 4)


CLI = Callable[..., Result]


@pytest.fixture
def cli() -> CLI:
    """`smevals` in this process (tests/helpers/cli.py)."""
    return run_cli


@pytest.fixture
def cli_process() -> CLI:
    """`smevals` as a real process: for signals, pipes, children, crashes and start-up."""
    return run_cli_process


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
