"""Benchmark exploring the web report.

(1) an Eval of N Runs (10 models, 2 samples, outputs of about 300 characters, or
    --output-chars more): the Eval page's data, the explore data (one line per Run, with
    the start of its output) and the search's index of whole outputs, made in-process:
    time and size of each;
(2) a Run's timeline made from a transcript of 10,000 entries, and from one with a 5 MiB
    line (parse, clean, cap);
(3) with Chromium (skipped without it): the Eval page opened with a filter in its address
    (the explore data loaded, the grid and the Run list drawn), then a search typed (the
    index loaded, the first time), then another.

Figures are printed, never asserted.

Usage: python bench/explore.py [--runs 10000] [--output-chars 0]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import timed, write  # noqa: E402
from smevals.commands.site import SiteOptions, load_all  # noqa: E402
from smevals.site import jsdata  # noqa: E402
from smevals.site.data import eval_index  # noqa: E402
from smevals.site.explore import explore_page  # noqa: E402
from smevals.site.search import Index  # noqa: E402
from smevals.site.timeline import bounded  # noqa: E402
from smevals.store import transcript  # noqa: E402

MODELS = 10
T = TypeVar("T")
SAMPLES = 2


def make(root: Path, runs: int, extra: int = 0) -> Path:
    tasks = max(1, runs // (MODELS * SAMPLES))
    write(root / "eval.yaml", "name: bench\n")
    lines = []
    for i in range(tasks):
        write(root / "tasks" / f"t{i:05d}.yaml", f"prompt: question {i}\n")
        for m in range(MODELS):
            words = " ".join(f"word{(i * 7 + m * 3 + k) % 97}" for k in range(40))
            more = " ".join(f"more{(i * 13 + m * 5 + k) % 4001}" for k in range(extra // 8))
            lines.append(json.dumps({"task": f"t{i:05d}", "model": f"m{m}",
                                     "output": f"answer {(i + m) % 3}: {words}"
                                               + (f" {more}" if more else "")}))
    write(root / "configs" / "default.yaml", "runner: smevals:replay\nresponses: r.jsonl\n"
                                             "model: m0\n")
    write(root / "configs" / "r.jsonl", "\n".join(lines) + "\n")
    write(root / "graders" / "default.yaml", "checks:\n  - checker: contains\n    value: word\n"
                                             "  - checker: contains\n    value: 'answer 1'\n")
    return root


def seconds(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def data_figures(ev: Path) -> None:
    [loaded] = load_all(SiteOptions((str(ev),)))
    took, index = seconds(lambda: eval_index(loaded))
    size = len(jsdata.encode("bench/index", index))
    print(f"Eval page data ({len(loaded.runs):,} Runs): {took:.2f} s, {size / 1024:,.0f} KB")
    took, doc = seconds(lambda: explore_page(loaded, index["grid"]))
    size = len(jsdata.encode("bench/explore", doc))
    print(f"explore data (one line per Run): {took:.2f} s, {size / 1024:,.0f} KB "
          f"({size / max(1, len(loaded.runs)):.0f} bytes per Run)")
    words = Index()
    took, _doc = seconds(lambda: explore_page(loaded, index["grid"], words))
    made = words.doc("bench")
    size = len(jsdata.encode("bench/search", made))
    print(f"explore data and the search's index of whole outputs, each output read once: "
          f"{took:.2f} s; the index: {size / 1024:,.0f} KB ({len(made['words']):,} words)")


def timeline_figures(entries: int) -> None:
    lines = []
    for i in range(entries):
        kind = ("message", "tool_call", "tool_result")[i % 3]
        lines.append(json.dumps({"type": kind, "role": "assistant", "text": f"step {i} " * 20,
                                 "name": "bash", "arguments": {"cmd": f"ls {i}"},
                                 "output": f"file{i}\n" * 30, "turn": i // 3}))
    data = "\n".join(lines).encode()
    took, shown = seconds(lambda: bounded("T", "x", transcript.parse(data)))
    print(f"timeline of a transcript of {entries:,} entries ({len(data) / 1e6:.1f} MB): "
          f"{1000 * took:.0f} ms, {len(shown['entries']):,} entries kept")
    big = b'{"type":"tool_result","output":"' + b"x" * (5 << 20) + b'"}\n'
    took, _shown = seconds(lambda: bounded("T", "x", transcript.parse(big)))
    print(f"timeline of one 5 MiB line: {1000 * took:.0f} ms")


def chromium() -> str | None:
    found = [os.environ.get("SMEVALS_CHROMIUM"), shutil.which("chromium"),
             shutil.which("chromium-browser"), "/usr/bin/chromium"]
    return next((p for p in found if p and os.path.isfile(p) and os.access(p, os.X_OK)), None)


def wait(page: object, script: str) -> None:
    """Poll `script` (wait_for_function would eval a string, which the site's policy refuses)."""
    deadline = time.monotonic() + 60
    while not page.evaluate(script):  # type: ignore[attr-defined]
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {script}")
        time.sleep(0.005)


def browser_figures(site: Path) -> None:
    path = chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        path = None
    if path is None:
        print("browser: skipped (no Chromium or Playwright)")
        return
    status = "document.querySelector('.explore-status')"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=["--headless", "--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto((site / "index.html").as_uri() + "#/")
        page.wait_for_selector("a.evalcard")
        start = time.perf_counter()
        page.goto((site / "index.html").as_uri() + "#/bench?f=fail")
        wait(page, f"{status} !== null && {status}.textContent.includes('match')")
        took = time.perf_counter() - start
        print(f"Eval page with a filter in its address: {took:.2f} s "
              f"({page.evaluate(status + '.textContent').split('.')[0]})")
        start = time.perf_counter()
        page.locator("input.search").fill("word13 word16")
        wait(page, f"location.hash.includes('q=') && {status}.textContent.includes('search')")
        print(f"a search typed, the index loaded (150 ms debounce included): "
              f"{time.perf_counter() - start:.2f} s")
        start = time.perf_counter()
        page.locator("input.search").fill("word2")
        wait(page, f"location.hash.includes('q=word2') && {status}.textContent.includes('search')")
        print(f"another search (150 ms debounce included): {time.perf_counter() - start:.2f} s")
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--output-chars", type=int, default=0,
                        help="characters added to each output (past the 500 shown)")
    args = parser.parse_args()
    timeline_figures(args.entries)
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_DIR")) as tmp:
        ev = make(Path(tmp) / "bench", args.runs, args.output_chars)
        models = [arg for i in range(MODELS) for arg in ("-m", f"m{i}")]
        timed(["run", str(ev), *models, "-n", str(SAMPLES), "-g", "-j", "2"])
        data_figures(ev)
        site = Path(tmp) / "site"
        took = timed(["build", str(ev), "-o", str(site)])
        print(f"build of the Eval: {took:.2f} s")
        browser_figures(site)


if __name__ == "__main__":
    main()
