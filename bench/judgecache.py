"""Benchmark judge cache lookups: N entries in one store, then every request looked up in a
fresh process (each bucket folder listed once, then O(1) per lookup) and once more in the
same process, and `verify` of the whole cache (each entry re-hashed).

Usage: python bench/judgecache.py [N]   (default 20000 entries; BENCH_DIR picks the disk)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from smevals.files.canonical import dumps  # noqa: E402
from smevals.store import judgecache  # noqa: E402
from smevals.store.verify import judge_cache_problems  # noqa: E402

LOOKUP = """
import sys, time
from pathlib import Path
from smevals.store import judgecache
root, n = Path(sys.argv[1]), int(sys.argv[2])
requests = [{"model": "bench", "messages": [f"request {i}"]} for i in range(n)]
for label in ("first pass (lists each bucket)", "second pass (warm)"):
    start = time.perf_counter()
    found = sum(judgecache.lookup(root, r) is not None for r in requests)
    wall = time.perf_counter() - start
    print(f"lookup, {label}: {found} of {n} found in {wall:.2f}s = {wall / n * 1e6:.0f} us each")
"""


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        root = Path(tmp) / "store"
        (root / "runs").mkdir(parents=True)
        start = time.perf_counter()
        for i in range(n):
            request = {"model": "bench", "messages": [f"request {i}"]}
            data = dumps({"format": 1, "kind": "judge", "request": request,
                          "response": {"content": '{"pass": true}'}, "created": "2026"})
            key = judgecache.request_key(request)
            judgecache.copy_entry(root, f"{key[:2]}/{judgecache.entry_name(key, data)}", data)
        print(f"wrote {n} entries in {time.perf_counter() - start:.2f}s")
        subprocess.run([sys.executable, "-c", LOOKUP, str(root), str(n)], check=True)
        start = time.perf_counter()
        checked, damage = judge_cache_problems(root)
        print(f"verify of the judge cache: {checked} entries, {len(damage)} damaged, in "
              f"{time.perf_counter() - start:.2f}s")


if __name__ == "__main__":
    main()
