"""The module-level caches of smevals, each registered by the module that keeps it.

A cache a module keeps for the life of its process (records read, listings, validators,
answers already asked) is declared right below its definition:

    _SEEN: dict[str, Thing] = {}
    caches.register(__name__, "_SEEN")

A real process starts with every one empty. Whatever runs several commands in one process
(the tests' in-process CLI, tests/helpers/cli.py) empties the registered caches of the
modules loaded so far with `clear_loaded`, so that no command sees what the one before it
found; a registered name its module no longer has is an error there, not a silent skip.
This module imports nothing: any layer may register.
"""

from __future__ import annotations

import sys

_REGISTERED: list[tuple[str, str]] = []


def register(module: str, *names: str) -> None:
    """Declare the module-level caches `names` of `module` (a dict, list or set emptied in
    place, or a functools cache cleared)."""
    for name in names:
        if (module, name) not in _REGISTERED:
            _REGISTERED.append((module, name))


def registered() -> list[tuple[str, str]]:
    """(module, attribute) of every cache registered so far (by the modules loaded)."""
    return list(_REGISTERED)


def clear_loaded() -> list[str]:
    """Empty every registered cache; the `module.name` of each. A name its module lacks, or
    that is no dict, list, set or functools cache, raises LookupError."""
    cleared = []
    for module_name, name in _REGISTERED:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        value = getattr(module, name, None)
        cache_clear = getattr(value, "cache_clear", None)
        if callable(cache_clear):
            cache_clear()
        elif isinstance(value, dict | list | set):
            value.clear()
        else:
            raise LookupError(f"{module_name}.{name} is registered as a cache but is "
                              f"{type(value).__name__}")
        cleared.append(f"{module_name}.{name}")
    return cleared
