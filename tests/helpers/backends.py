"""The sandbox's local backends, one at a time: `use(kind, monkeypatch)` makes `auto` pick
only that way of building the program's view (smevals.proc.contain), or skips the test
where this machine cannot give it, naming why.

- `unshare`: smevals is root (CI is);
- `unshare --map-root-user`: unprivileged user namespaces (also tried as root);
- `bwrap`: bubblewrap on PATH, or the binary SMEVALS_TEST_BWRAP names (a copy extracted
  from the distribution's package, so that a machine without it installed system-wide,
  whose other tests must see no bwrap, can still test it).

With SMEVALS_REQUIRE_SANDBOX=1 (set by .ci/run, which installs bubblewrap and runs as
root) a test of `unshare` or `bwrap` that cannot have it fails instead of skipping.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import pytest

KINDS = ("unshare", "unshare --map-root-user", "bwrap")
BWRAP_VAR = "SMEVALS_TEST_BWRAP"
REQUIRED = ("unshare", "bwrap")


def _lacking(kind: str, why: str) -> NoReturn:
    if os.environ.get("SMEVALS_REQUIRE_SANDBOX") == "1" and kind in REQUIRED:
        pytest.fail(f"SMEVALS_REQUIRE_SANDBOX=1: {why}")
    pytest.skip(why)


def bwrap() -> str | None:
    """The bubblewrap binary to test with, if any."""
    given = os.environ.get(BWRAP_VAR)
    if given and os.access(given, os.X_OK):
        return given
    return shutil.which("bwrap")


def forget() -> None:
    """Every cached answer about the machine's containment (probes, refusals)."""
    from smevals.proc import contain
    from smevals.spec import sandbox

    for cached in (contain._local, contain._viewed, contain._starts, sandbox._refused):
        cached.cache_clear()
    contain._FAILED.clear()


@contextmanager
def use(kind: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Within it, `auto` means `kind` only (its way with a PID namespace); yields the name
    Runs and Checks record for it. Skips where this machine cannot give it."""
    from smevals.proc import contain

    if kind == "bwrap":
        found = bwrap()
        if found is None:
            _lacking(kind, f"bubblewrap is not installed here (nor named by {BWRAP_VAR})")
        monkeypatch.setenv("PATH", f"{os.path.dirname(found)}:{os.environ['PATH']}")
    monkeypatch.setattr(contain, "_WAYS", tuple(w for w in contain._WAYS if w.name == kind))
    forget()
    try:
        box = contain.find("auto", view=True)
        if box is None:
            _lacking(kind, f"{kind} cannot build a view here: "
                           f"{contain.probe_failure('auto', False)}")
        yield box.name
    finally:
        forget()
