"""The `render_svg` checker's renderer: a child that renders SVG to PNG with resvg.

Started once per smevals process through `smevals.proc.worker` (its own session, a memory
limit, killed at each render's deadline). A request is a JSON line (width, height,
background, system_fonts) and the SVG, already cleared of external references by the
checker; the answer is one status byte (0: the PNG follows; 1: resvg's reason; 2: resvg-py
is not installed) and the PNG or the reason.
"""

from __future__ import annotations

import json
import sys
from typing import Any

OK, FAILED, MISSING = b"\x00", b"\x01", b"\x02"


def render(header: dict[str, Any], svg: str) -> bytes:
    try:
        import resvg_py
    except ImportError:
        return MISSING + b"resvg-py is not installed"
    try:
        png = resvg_py.svg_to_bytes(
            svg_string=svg, width=header["width"], height=header["height"],
            background=header.get("background"),
            skip_system_fonts=not header.get("system_fonts", False),
            resources_dir=header["resources_dir"])  # an empty folder: nothing to load
    except Exception as error:  # resvg's reason is the Check's
        return FAILED + str(error).encode("utf-8", "replace")[:2000]
    return OK + bytes(png)


def main() -> None:
    import os
    import tempfile

    from smevals.proc.worker import read_frame, write_frame

    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    empty = tempfile.mkdtemp(prefix="smevals-svg-")
    try:
        while True:
            request = read_frame(stdin)
            if request is None:
                return
            line, _, body = request.partition(b"\n")
            header = {**json.loads(line), "resources_dir": empty}
            write_frame(stdout, render(header, body.decode("utf-8")))
    finally:
        os.rmdir(empty)


if __name__ == "__main__":
    main()
