"""The `render_svg` checker's renderer: a child that renders SVG to PNG with resvg.

Started once per smevals process through `smevals.proc.worker` (its own session, a memory
limit, killed at each render's deadline). A request is a JSON line (width, height,
background as RGBA bytes, system_fonts) and the SVG, already cleared of external references
by the checker; the answer is one status byte (0: the PNG follows; 1: resvg's reason; 2:
resvg is not installed) and the PNG or the reason.

resvg is used through the `resvg` binding (smevals' `svg` extra): the tree is parsed with
resvg's default options (96 dpi, text in 16 px unless the SVG says otherwise, images looked
for in an empty folder only), then fitted into width x height keeping its aspect: the PNG's
size and the scale are worked out as resvg's own "fit to size" does, in single precision,
so the pixels and the PNG bytes are those the `resvg-py` binding gave before
(tests/checkers/test_render_svg.py compares them with PNGs it made).
"""

from __future__ import annotations

import json
import math
import struct
import sys
from typing import Any

OK, FAILED, MISSING = b"\x00", b"\x01", b"\x02"
FONT_SIZE = 16                      # px: the size text has when the SVG gives none
SYSTEM_FAMILY = "Liberation Serif"  # the family of text that names none, with system fonts

_OPTIONS: dict[bool, Any] = {}      # system_fonts -> resvg's options, made once


def render(header: dict[str, Any], svg: str) -> bytes:
    try:
        import resvg
    except ImportError:
        return MISSING + b"resvg is not installed"
    try:
        tree = resvg.usvg.Tree.from_str(svg, _options(resvg, header))
        own = tree.int_size()
        width, height = fit(own, (header["width"], header["height"]))
        scale = (_f32(_f32(width) / _f32(own[0])), 0.0, 0.0, 0.0,
                 _f32(_f32(height) / _f32(own[1])), 0.0)
        background = header.get("background")
        png = resvg.render(tree, scale, bg_size=(width, height),
                           bg_color=tuple(background) if background else None)
    except BaseException as error:  # resvg's reason is the Check's (a panic too)
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
        return FAILED + reason(error).encode("utf-8", "replace")[:2000]
    return OK + bytes(png)


# usvg's errors in its own words (the binding may give only their names, from a panic)
_REASONS = {"InvalidSize": "SVG has an invalid size",
            "ElementsLimitReached": "the maximum number of SVG elements has been reached",
            "NotAnUtf8Str": "provided data has not an UTF-8 encoding",
            "MalformedGZip": "provided data has a malformed GZip content"}


def reason(error: BaseException) -> str:
    """resvg's reason for refusing an SVG, as the renderer before said it."""
    text = str(error).removeprefix("Invalid SVG: ")
    name = text.rpartition("`Err` value: ")[2] if "`Err` value: " in text else text
    if name.startswith("ParsingFailed("):
        return f"SVG data parsing failed cause {name[len('ParsingFailed('):-1]}"
    return _REASONS.get(name, text)


def _options(resvg: Any, header: dict[str, Any]) -> Any:
    fonts = bool(header.get("system_fonts", False))
    if fonts not in _OPTIONS:
        options = resvg.usvg.Options.default()
        options.resources_dir = header["resources_dir"]     # an empty folder: nothing to load
        options.font_size = FONT_SIZE
        if fonts:
            options.load_system_fonts()
            options.font_family = SYSTEM_FAMILY
        _OPTIONS[fonts] = options
    return _OPTIONS[fonts]


def fit(size: tuple[int, int], box: tuple[int, int]) -> tuple[int, int]:
    """The largest size of `size`'s aspect inside `box`, rounded up, in single precision
    (resvg's "fit to size")."""
    (width, height), (box_w, box_h) = size, box
    wide = math.ceil(_f32(_f32(_f32(box_h) * _f32(width)) / _f32(height)))
    if wide < box_w:
        return wide, box_h
    return box_w, math.ceil(_f32(_f32(_f32(box_w) * _f32(height)) / _f32(width)))


def _f32(value: float) -> float:
    return float(struct.unpack("f", struct.pack("f", value))[0])


def main() -> None:
    """Answer render requests until stdin ends; argv[1] is the empty resources folder, made
    and removed by the parent (smevals.checkers.svg)."""
    from smevals.proc.worker import read_frame, write_frame

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    empty = sys.argv[1]
    while True:
        request = read_frame(stdin)
        if request is None:
            return
        line, _, body = request.partition(b"\n")
        header = {**json.loads(line), "resources_dir": empty}
        write_frame(stdout, render(header, body.decode("utf-8")))


if __name__ == "__main__":
    main()
