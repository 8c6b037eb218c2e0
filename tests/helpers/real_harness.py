"""The real Codex, Claude Code and Pi for the tests: which are installed here.

The CLIs are found on PATH. Where one is missing its tests skip with the reason, unless
SMEVALS_REQUIRE_HARNESSES=1 (set by .ci/run, which installs them): then they fail. What the
scripted model does with each is tools/harness_scripts.py.
"""

from __future__ import annotations

import os
import shutil

import pytest

from tools.harness_scripts import Real

REQUIRED = "SMEVALS_REQUIRE_HARNESSES"


def require(real: Real) -> str:
    """The path of the harness's program, or the test skips (fails in CI) saying why."""
    found = shutil.which(real.program)
    if found is not None:
        return found
    why = (f"{real.program} is not installed (npm i -g {real.package}); .ci/run installs "
           f"the pinned version and sets {REQUIRED}=1")
    if os.environ.get(REQUIRED) == "1":
        pytest.fail(why)
    pytest.skip(why)
