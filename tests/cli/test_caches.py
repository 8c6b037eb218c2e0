"""The module-level caches are registered by the modules that keep them (smevals/caches.py),
and the in-process CLI (tests/helpers/cli.py) empties exactly those before each command: a
registered name that does not exist fails instead of being skipped."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from types import ModuleType

import pytest

import smevals
from smevals import caches
from tests.helpers import reset_process_state


def _import_all() -> None:
    for info in pkgutil.walk_packages(smevals.__path__, "smevals."):
        if info.name.endswith("__main__"):
            continue
        importlib.import_module(info.name)


def test_every_registered_cache_exists_and_is_emptied() -> None:
    _import_all()
    listed = caches.registered()
    assert ("smevals.store.gitindex", "_SEEN") in listed
    assert ("smevals.checkers.options", "_VALIDATORS") in listed
    for module_name, name in listed:
        value = getattr(sys.modules[module_name], name)
        assert isinstance(value, dict | list | set) or callable(getattr(value, "cache_clear", None))
    gitindex = sys.modules["smevals.store.gitindex"]
    gitindex._SEEN[("root", "name")] = None
    cleared = reset_process_state()
    assert sorted(cleared) == sorted(f"{m}.{n}" for m, n in listed)
    assert gitindex._SEEN == {}


def test_a_registered_cache_that_does_not_exist_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    module = ModuleType("smevals_planted")
    monkeypatch.setitem(sys.modules, "smevals_planted", module)
    monkeypatch.setattr(caches, "_REGISTERED", [*caches.registered(), ("smevals_planted", "_GONE")])
    with pytest.raises(LookupError, match="smevals_planted._GONE is registered as a cache"):
        reset_process_state()
