"""Edit distance is rapidfuzz's, loaded on the first comparison (never at start-up)."""

from __future__ import annotations

import subprocess
import sys


def test_rapidfuzz_loads_on_first_use() -> None:
    code = ("import sys\n"
            "from smevals.checkers import edit_distance, text  # noqa: F401\n"
            "before = 'rapidfuzz' in sys.modules\n"
            "print(before, edit_distance.levenshtein('kitten', 'sitting'), "
            "'rapidfuzz' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out == "False 3 True\n"
