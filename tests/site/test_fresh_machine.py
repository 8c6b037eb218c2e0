"""`python -m pytest` on a machine without Chromium: the browser tests skip with one reason,
unless SMEVALS_REQUIRE_BROWSER=1 (as .ci/run sets), which makes them fail."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REASON = ("no Chromium found (/nonexistent/chromium): `apt-get install chromium` or set "
          "SMEVALS_CHROMIUM to run the browser tests")


def pytest_web(basetemp: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The browser tests in a pytest of their own, whose temporary folders are below
    `basetemp` (pytest's default would remove the oldest runs' folders, this suite's own
    among them, which takes seconds)."""
    full = {**os.environ, "SMEVALS_CHROMIUM": "/nonexistent/chromium", **env}
    if "SMEVALS_REQUIRE_BROWSER" not in env:
        full.pop("SMEVALS_REQUIRE_BROWSER", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-rs", "-p",
                           "no:cacheprovider", "--basetemp", str(basetemp),
                           "tests/site/test_browser.py", *args], cwd=ROOT,
                          env=full,
                          capture_output=True, text=True, timeout=300)


def test_without_chromium_the_browser_tests_skip_with_one_reason(tmp_path: Path) -> None:
    proc = pytest_web(tmp_path / "t")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    skipped = [line for line in proc.stdout.splitlines() if line.startswith("SKIPPED")]
    assert [re.sub(r":\d+:", ":N:", line) for line in skipped] == [
        f"SKIPPED [11] tests/helpers/web/site.py:N: {REASON}"]
    assert proc.stdout.splitlines()[-1].startswith("11 skipped in ")


def test_with_smevals_require_browser_they_fail(tmp_path: Path) -> None:
    proc = pytest_web(tmp_path / "t", "-k", "lands_appears", SMEVALS_REQUIRE_BROWSER="1")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"\nSMEVALS_REQUIRE_BROWSER=1, but {REASON}\n" in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("10 deselected, 1 error in ")
