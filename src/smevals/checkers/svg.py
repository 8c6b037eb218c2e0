"""render_svg: an SVG (the output, a Run file or an earlier Check's file) rendered to a PNG
kept with the Grade, by resvg (smevals' `svg` extra: the `resvg` binding) in a bounded child.

Bounds: the SVG is at most MAX_SVG_BYTES; external references are left out before
rendering (xmlsafe.clean); the PNG fits in width x height, each at most MAX_SIDE; the renderer
runs in one long-lived child (smevals.proc.worker) with a memory limit, killed when a render
passes its deadline (the Check's `timeout`, else DEFAULT_TIMEOUT).
"""

from __future__ import annotations

import math
import os
import sys
import threading
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, NoReturn

from smevals.checkers.base import BOOL, Checker, CheckInput, CheckResult, checker, fail
from smevals.checkers.inputs import read_bytes, relative_path

if TYPE_CHECKING:
    from smevals.proc.worker import Worker

CHECKERS: dict[str, Checker] = {}

MAX_SVG_BYTES = 1 << 20
MAX_SIDE = 4096
DEFAULT_TIMEOUT = 10.0
WORKER_MEMORY = 2 << 30
EXTRA = "pip install 'resvg>=0.2'"

_SIDE = {"type": "integer", "minimum": 1, "maximum": MAX_SIDE,
         "x-expect": f"a whole number of pixels from 1 to {MAX_SIDE}"}
_WORKER: dict[str, Worker] = {}
_WORKER_LOCK = threading.Lock()


def _problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    name = opts.get("output")
    if isinstance(name, str) and name:
        try:
            relative_path(name)
        except Exception as error:  # CheckFailure: the reason names the path
            return [("output", str(error).replace("file:", "output:"))]
        if not name.lower().endswith(".png"):
            return [("output", f"the PNG's name must end in .png, not {name!r}")]
    return []


@checker(
    CHECKERS, "render_svg",
    "Renders an SVG (the output, a Run file or a workspace file) to a PNG kept with the Grade.",
    properties={
        "output": {"type": "string", "minLength": 1,
                   "x-expect": "the PNG's name in the Grade's folder (ending in .png)"},
        "width": _SIDE, "height": _SIDE,
        "background": {"type": "string", "pattern": r"^[#A-Za-z0-9(),.% ]{1,64}$",
                       "x-expect": "a CSS colour, e.g. white or #ffffff"},
        "system_fonts": BOOL,
    },
    reads="text",
    problems=_problems,
)
def render_svg(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    from smevals.checkers.xmlsafe import SvgProblem, clean

    if inp.workspace is None:
        fail("render_svg keeps its PNG in the Grade's folder: it needs a Grade to run in")
    label, data = _source(opts, inp)
    try:
        cleaned = clean(_svg_span(data, label))
    except SvgProblem as problem:
        fail(f"{label}: {problem}")
    width, height = box(cleaned.size, opts.get("width"), opts.get("height"))
    png = render(cleaned.text, width, height, opts.get("background"),
                 bool(opts.get("system_fonts", False)), inp.timeout or DEFAULT_TIMEOUT, label)
    name = opts.get("output") or str(PurePosixPath(label).with_suffix(".png"))
    _keep(Path(inp.workspace), name, png)
    from smevals.files.imagefmt import dimensions

    got = dimensions(png) or (0, 0)
    details: dict[str, Any] = {"png": name, "width": got[0], "height": got[1],
                               "bytes": len(png)}
    notes = ""
    if cleaned.left_out:
        details["left_out"] = cleaned.left_out[:10]
        notes = (f"left out {len(cleaned.left_out)} external reference(s), never loaded: "
                 + ", ".join(cleaned.left_out[:3]))[:500]
    return CheckResult(ok=True, notes=notes, details=details)


def _source(opts: dict[str, Any], inp: CheckInput) -> tuple[str, bytes]:
    if "file" in opts:
        from smevals.checkers.inputs import find_file

        size = find_file(inp, opts["file"]).stat().st_size
        if size > MAX_SVG_BYTES:
            fail(f"{opts['file']} is {size} bytes, over the {MAX_SVG_BYTES}-byte limit of an "
                 "SVG to render")
        return opts["file"], read_bytes(inp, opts["file"])
    data = inp.output.encode("utf-8", "surrogatepass")
    return "output.txt", data


def _svg_span(data: bytes, label: str) -> bytes:
    """From the first `<svg` to the end of the last `</svg>` (a chatty answer's fences and
    words around it left out)."""
    start = data.find(b"<svg")
    if start < 0:
        fail(f"no <svg> element in {label}")
    end = data.rfind(b"</svg>")
    span = data[start:end + 6] if end > start else data[start:]
    if len(span) > MAX_SVG_BYTES:
        fail(f"the SVG in {label} is {len(span)} bytes, over the {MAX_SVG_BYTES}-byte limit")
    return span


def box(size: tuple[float, float], width: int | None, height: int | None) -> tuple[int, int]:
    """The box the PNG fits in (keeping the SVG's aspect): the options, a missing one by the
    aspect, else the SVG's own size; never more than MAX_SIDE a side."""
    own_w, own_h = (v if math.isfinite(v) and v > 0 else 100.0 for v in size)
    if width is None and height is None:
        scale = min(1.0, MAX_SIDE / own_w, MAX_SIDE / own_h)
        return _side(own_w * scale), _side(own_h * scale)
    if width is None:
        assert height is not None
        return _side(height * own_w / own_h), height
    if height is None:
        return width, _side(width * own_h / own_w)
    return width, height


def _side(value: float) -> int:
    return max(1, min(MAX_SIDE, math.ceil(value - 1e-9)))


def render(svg: str, width: int, height: int, background: str | None, fonts: bool,
           timeout: float, label: str) -> bytes:
    import importlib.util

    import orjson

    from smevals.proc.worker import WorkerError

    if importlib.util.find_spec("resvg") is None:
        _missing()
    color = None
    if background is not None:
        from smevals.checkers.csscolor import parse_color

        color = parse_color(background)
        if color is None:
            fail(f"background: {background!r} is not a CSS colour")
    header = orjson.dumps({"width": width, "height": height, "background": color,
                           "system_fonts": fonts})
    try:
        answer = _worker().ask(header + b"\n" + svg.encode("utf-8", "surrogatepass"),
                               timeout)
    except WorkerError as error:
        if error.timed_out:
            fail(f"rendering {label} took longer than {timeout:g} s (the renderer was stopped)")
        fail(f"the renderer failed on {label}: {error.reason}")
    status, body = answer[:1], answer[1:]
    if status == b"\x00":
        return body
    if status == b"\x02":
        _missing()
    fail(f"{label}: resvg: {body.decode('utf-8', 'replace')}")


def _missing() -> NoReturn:
    """Fail the Check naming the optional dependency it needs (`smevals test` reports the
    case as not run, with this line, rather than as a mismatch)."""
    fail(f"render_svg needs resvg, which is not installed: {EXTRA}", missing_extra="svg",
         install=EXTRA)


def _worker() -> Worker:
    from smevals.proc.limits import Limits
    from smevals.proc.worker import Worker

    with _WORKER_LOCK:
        if "worker" not in _WORKER:
            root = str(Path(__file__).resolve().parents[2])
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": root,
                   "LC_ALL": "C.UTF-8"}
            _WORKER["worker"] = Worker(
                [sys.executable, "-s", "-m", "smevals.checkers.svg_child", _empty_folder()],
                env, Limits(memory_bytes=WORKER_MEMORY, core_dumps=False))
        return _WORKER["worker"]


def _empty_folder() -> str:
    """The renderer's resources folder, empty so that a drawing can load nothing: made and
    removed by this process, since the renderer is killed, never asked to end."""
    import atexit
    import tempfile

    folder = tempfile.mkdtemp(prefix="smevals-svg-")
    atexit.register(_remove, folder)
    return folder


def _remove(folder: str) -> None:
    import contextlib

    with contextlib.suppress(OSError):
        os.rmdir(folder)


def _keep(workspace: Path, name: str, png: bytes) -> None:
    """Write the PNG into the Grade's folder: never over a file, never through a link."""
    rel = relative_path(name)
    target = workspace / rel
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.parent.resolve().is_relative_to(workspace.resolve()):
            fail(f"output: {name!r} leads outside the Grade's folder")
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        fail(f"output: {name} exists already in the Grade's folder (give another `output:`)")
    except OSError as error:
        fail(f"output: cannot write {name}: {error.strerror}")
    with os.fdopen(fd, "wb") as out:
        out.write(png)
