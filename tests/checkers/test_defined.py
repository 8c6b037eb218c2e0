"""The hidden tests' count (checkers/defined.py) is taken once per Task and process, also
when the Checks of several Runs of the Task ask for it at once (`grade -j`)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from smevals.checkers import defined
from smevals.evaldef.workspace import Starting


def files(digest: str) -> Starting:
    return Starting(files=(), sha256={}, digest=digest)


def test_checks_asking_at_once_share_one_count(monkeypatch: pytest.MonkeyPatch) -> None:
    counted: list[str] = []

    def collect(spec: Any, runner: str, start: Any, hidden: Starting, run: Any) -> int:
        counted.append(hidden.digest)
        time.sleep(0.2)                 # the test runner collecting, while the others ask
        return 7 if hidden.digest.startswith("a") else 3

    monkeypatch.setattr(defined, "_collect", collect)
    monkeypatch.setattr(defined, "_KEPT", {})
    got: list[Any] = []

    def ask(digest: str) -> None:
        got.append(defined.defined_tests("pytest -q", "pytest", None, files(digest), None))  # type: ignore[arg-type]

    threads = [threading.Thread(target=ask, args=(d,)) for d in ["a1"] * 4 + ["b2"] * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(counted) == ["a1", "b2"]
    assert sorted(got) == [3, 3, 7, 7, 7, 7]
    assert defined._COUNTING == {}
    assert defined.defined_tests("pytest -q", "pytest", None, files("a1"), None) == 7  # type: ignore[arg-type]
    assert sorted(counted) == ["a1", "b2"]


def test_another_command_is_not_counted() -> None:
    assert defined.defined_tests("make test", "", None, files("a1"), None) is None  # type: ignore[arg-type]


def test_the_counts_are_emptied_between_in_process_commands() -> None:
    """The counts are a cache of the process, emptied with the others (smevals.caches)
    between the commands that tests/helpers/cli.py runs in one process."""
    from smevals import caches

    defined._KEPT[("probe",)] = 1
    try:
        assert "smevals.checkers.defined._KEPT" in caches.clear_loaded()
        assert defined._KEPT == {}
    finally:
        defined._KEPT.pop(("probe",), None)
