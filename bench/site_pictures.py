"""Benchmark the pictures of the web report.

(1) the SVG sanitiser on a 20 KB drawing (SVGs per second);
(2) reading a picture's size from its header (PNG, and a JPEG behind 60 KB of EXIF);
(3) `smevals build` of an Eval of N Runs that each leave a PNG and a 20 KB SVG, against
    the same Eval whose Runs leave none (the pictures' share of the build).

Figures are printed, never asserted.

Usage: python bench/site_pictures.py [--runs 300]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import timed, write  # noqa: E402
from smevals.checkers import xmlsafe as svgsafe  # noqa: E402
from smevals.site import pictures  # noqa: E402
from tools.imagefiles import jpeg_head, png  # noqa: E402


def drawing(size: int = 20_000) -> str:
    rng = random.Random(1)
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 400" width="400" '
             'height="400"><style>.b{fill:#333}</style><defs><linearGradient id="g">'
             '<stop offset="0" stop-color="#fc0"/></linearGradient></defs>']
    while sum(map(len, parts)) < size:
        parts.append(f'<path d="M{rng.randint(0, 400)} {rng.randint(0, 400)} C 10 20, 30 40, '
                     f'{rng.randint(0, 400)} 60" fill="url(#g)" stroke="black" '
                     'stroke-width="2"/>')
    parts.append('<text x="10" y="20">pelican</text></svg>')
    return "".join(parts)


def rate(label: str, fn: Callable[[], object], n: int) -> None:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    seconds = time.perf_counter() - start
    print(f"{label}: {n / seconds:,.0f}/s ({1000 * seconds / n:.2f} ms each)")


def make(root: Path, with_pictures: bool, runs: int) -> Path:
    tasks = max(1, runs // 10)
    write(root / "eval.yaml", "name: gallery\n")
    for i in range(tasks):
        write(root / "tasks" / f"t{i:03d}.yaml", f"prompt: draw animal {i}\n")
    copy = 'cp "$SMEVALS_EVAL_DIR/pics/a.png" drawing.png\n' \
           'cp "$SMEVALS_EVAL_DIR/pics/a.svg" drawing.svg\n' if with_pictures else ""
    write(root / "configs" / "default.yaml", "runner: ./r.sh\nmodel: m1\n")
    write(root / "configs" / "r.sh", f"#!/bin/sh\necho drew\n{copy}", executable=True)
    write(root / "graders" / "default.yaml", "checks:\n  - checker: contains\n    value: drew\n")
    (root / "pics").mkdir()
    (root / "pics" / "a.png").write_bytes(png(400, 400))
    (root / "pics" / "a.svg").write_text(drawing())
    return root


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    svg = drawing().encode()
    rate(f"sanitise a {len(svg) // 1000} KB SVG", lambda: svgsafe.sanitise(svg), 200)
    head = png(640, 480)
    rate("size of a PNG from its header", lambda: pictures.inspect(head), 20_000)
    head = jpeg_head(4000, 3000, app_bytes=60_000)
    rate("size of a JPEG behind 60 KB of EXIF", lambda: pictures.inspect(head), 20_000)
    with tempfile.TemporaryDirectory() as tmp:
        for with_pictures in (False, True):
            ev = make(Path(tmp) / f"ev{int(with_pictures)}", with_pictures, args.runs)
            models = [arg for i in range(10) for arg in ("-m", f"m{i}")]
            timed(["run", str(ev), *models, "-g", "-j", "2"])
            site = Path(tmp) / f"site{int(with_pictures)}"
            seconds = timed(["build", str(ev), "-o", str(site)])
            what = "a PNG and a 20 KB SVG each" if with_pictures else "no pictures"
            print(f"build of {args.runs} Runs with {what}: {seconds:.2f} s")


if __name__ == "__main__":
    main()
