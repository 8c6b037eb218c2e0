"""Third-party checkers from the `smevals.checkers` entry-point group (loaded lazily).

An entry point resolves to a `Checker` (full declaration, options validated) or to a
plain function `fn(options, inp) -> CheckResult` (options passed through unchecked).
"""

from __future__ import annotations

from importlib.metadata import entry_points

from smevals import caches
from smevals.checkers.base import Checker, CheckFailure

_LOADED: dict[tuple[str, str], Checker] = {}
caches.register(__name__, "_LOADED")


def load_plugin(group: str, key: str) -> Checker | None:
    """The plugin whose entry-point name canonicalises to `key`, or None (cached)."""
    if (group, key) not in _LOADED:
        found = _find(group, key)
        if found is None:
            return None
        _LOADED[(group, key)] = found
    return _LOADED[(group, key)]


def _find(group: str, key: str) -> Checker | None:
    for ep in entry_points(group=group):
        if ep.name.strip().lower().replace("-", "_") != key:
            continue
        try:
            obj = ep.load()
        except Exception as exc:
            raise CheckFailure(f"cannot load checker plugin {ep.name!r}: {exc}") from exc
        return _as_checker(key, obj)
    return None


def _as_checker(key: str, obj: object) -> Checker:
    if isinstance(obj, Checker):
        return obj
    if callable(obj):
        return Checker(name=key, fn=obj, summary="third-party checker", reads="none", strict=False)
    raise CheckFailure(f"checker plugin {key!r} is neither a Checker nor a function")
