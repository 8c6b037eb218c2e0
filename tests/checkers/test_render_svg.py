"""render_svg: an SVG rendered to a PNG in the Grade's folder; its bounds and refusals."""

from __future__ import annotations

import base64
import os
import socket
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from smevals.checkers import option_problems
from smevals.checkers.svg import MAX_SIDE, MAX_SVG_BYTES
from tests.helpers.checkers import run

pytest.importorskip("resvg")

ROOT = Path(__file__).resolve().parents[2]

NS = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
CIRCLE = f'<svg {NS} width="200" height="100"><circle cx="50" cy="50" r="40" fill="red"/></svg>'


def png(width: int, height: int, rgb: tuple[int, int, int] = (0, 128, 255)) -> bytes:
    """A real PNG of one colour (a picture that would show if it were loaded)."""
    row = b"\x00" + bytes(rgb) * width

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                             0, 0, 0))
            + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b""))


def size_of(data: bytes) -> tuple[int, int]:
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    run_dir, workspace = tmp_path / "run", tmp_path / "ws"
    run_dir.mkdir()
    workspace.mkdir()
    return run_dir, workspace


def render(dirs: tuple[Path, Path], opts: dict[str, Any], output: str = CIRCLE,
           timeout: float | None = None) -> dict[str, Any]:
    return run("render_svg", opts, output, run_dir=dirs[0], workspace=dirs[1],
               timeout=timeout).as_dict()


def test_renders_a_chatty_answer_to_a_png_in_the_workspace(dirs: tuple[Path, Path]) -> None:
    answer = f"Here it is:\n\n```svg\n{CIRCLE}\n```\nEnjoy!"
    result = render(dirs, {}, answer)
    assert result == {"ok": True, "details": {"png": "output.png", "width": 200, "height": 100,
                                              "bytes": len((dirs[1] / "output.png").read_bytes())}}
    assert size_of((dirs[1] / "output.png").read_bytes()) == (200, 100)


def test_width_and_height_fit_the_picture_keeping_its_aspect(dirs: tuple[Path, Path]) -> None:
    assert render(dirs, {"width": 400, "output": "a.png"})["details"]["height"] == 200
    assert render(dirs, {"height": 50, "output": "b.png"})["details"]["width"] == 100
    both = render(dirs, {"width": 300, "height": 300, "output": "c.png"})["details"]
    assert (both["width"], both["height"]) == (300, 150)
    assert size_of((dirs[1] / "c.png").read_bytes()) == (300, 150)


def test_a_file_of_the_run_or_of_an_earlier_check(dirs: tuple[Path, Path]) -> None:
    (dirs[0] / "pic.svg").write_text(CIRCLE)
    (dirs[1] / "sub").mkdir()
    (dirs[1] / "sub" / "drawing.svg").write_text(CIRCLE.replace("red", "blue"))
    assert render(dirs, {"file": "pic.svg"})["details"]["png"] == "pic.png"
    assert render(dirs, {"file": "sub/drawing.svg"})["details"]["png"] == "sub/drawing.png"
    assert (dirs[1] / "pic.png").is_file() and (dirs[1] / "sub" / "drawing.png").is_file()
    assert not (dirs[0] / "pic.png").exists()                  # the Run is never written


def test_background_changes_the_picture(dirs: tuple[Path, Path]) -> None:
    render(dirs, {"output": "clear.png"})
    render(dirs, {"output": "white.png", "background": "white"})
    assert (dirs[1] / "clear.png").read_bytes() != (dirs[1] / "white.png").read_bytes()


def test_the_same_svg_gives_the_same_bytes(dirs: tuple[Path, Path]) -> None:
    render(dirs, {"output": "one.png"})
    render(dirs, {"output": "two.png"})
    assert (dirs[1] / "one.png").read_bytes() == (dirs[1] / "two.png").read_bytes()


REFUSED = [
    ("no svg", "I cannot draw.", "no <svg> element in output.txt"),
    ("broken", "<svg><g>", "output.txt: not well-formed XML: no element found: line 1, column 8"),
    ("not svg", "<svg-ish/>", "output.txt: the root element is <svg-ish>, not <svg>"),
    ("zero size", f'<svg {NS} width="0" height="10"/>',
     "output.txt: resvg: SVG has an invalid size"),
    ("entities", '<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg>&a;</svg>',
     "output.txt: not well-formed XML: undefined entity: line 1, column 5"),
]


@pytest.mark.parametrize("output,notes", [(o, n) for _i, o, n in REFUSED],
                         ids=[i for i, _o, _n in REFUSED])
def test_a_broken_svg_fails_with_the_reason(dirs: tuple[Path, Path], output: str,
                                            notes: str) -> None:
    assert render(dirs, {}, output) == {"ok": False, "notes": notes}
    assert list(dirs[1].iterdir()) == []


def test_the_output_never_overwrites_and_stays_in_the_workspace(dirs: tuple[Path, Path],
                                                                 tmp_path: Path) -> None:
    (dirs[1] / "taken.png").write_bytes(b"mine")
    assert render(dirs, {"output": "taken.png"})["notes"] == (
        "output: taken.png exists already in the Grade's folder (give another `output:`)")
    assert (dirs[1] / "taken.png").read_bytes() == b"mine"
    (tmp_path / "outside").mkdir()
    (dirs[1] / "away").symlink_to(tmp_path / "outside")
    assert render(dirs, {"output": "away/x.png"})["notes"] == (
        "output: 'away/x.png' leads outside the Grade's folder")
    assert list((tmp_path / "outside").iterdir()) == []


def test_option_problems_for_validate() -> None:
    assert option_problems("render_svg", {"output": "../x.png"}) == [
        ("output", "output: may not contain '..' ('../x.png')")]
    assert option_problems("render_svg", {"output": "x.jpg"}) == [
        ("output", "the PNG's name must end in .png, not 'x.jpg'")]
    assert option_problems("render_svg", {"width": 0}) == [
        ("width", f"expected a whole number of pixels from 1 to {MAX_SIDE}, got 0")]
    assert option_problems("render_svg", {"height": 5000, "file": "a.svg"}) == [
        ("height", f"expected a whole number of pixels from 1 to {MAX_SIDE}, got 5000")]


def test_needs_a_grade_to_keep_the_png() -> None:
    assert run("render_svg", {}, CIRCLE).as_dict() == {"ok": False, "notes": (
        "render_svg keeps its PNG in the Grade's folder: it needs a Grade to run in")}


def test_input_size_is_bounded(dirs: tuple[Path, Path]) -> None:
    big = f'<svg {NS}>' + "<!-- padding -->" * (MAX_SVG_BYTES // 16) + "</svg>"
    assert render(dirs, {}, big)["notes"] == (
        f"the SVG in output.txt is {len(big)} bytes, over the {MAX_SVG_BYTES}-byte limit")
    (dirs[0] / "big.svg").write_text(big)
    assert render(dirs, {"file": "big.svg"})["notes"] == (
        f"big.svg is {len(big)} bytes, over the {MAX_SVG_BYTES}-byte limit of an SVG to render")


def test_output_pixels_are_bounded(dirs: tuple[Path, Path]) -> None:
    huge = f'<svg {NS} width="100000" height="50000"><rect width="10" height="10"/></svg>'
    details = render(dirs, {}, huge)["details"]
    assert (details["width"], details["height"]) == (MAX_SIDE, MAX_SIDE // 2)
    assert size_of((dirs[1] / "output.png").read_bytes()) == (MAX_SIDE, MAX_SIDE // 2)


def test_a_render_past_its_deadline_is_stopped(dirs: tuple[Path, Path]) -> None:
    slow = (f'<svg {NS} width="4096" height="4096"><filter id="f"><feTurbulence '
            'baseFrequency="0.01" numOctaves="10"/><feGaussianBlur stdDeviation="50"/>'
            '</filter>' + '<rect width="4096" height="4096" filter="url(#f)"/>' * 40 + "</svg>")
    assert render(dirs, {"output": "slow.png"}, slow, timeout=0.2) == {
        "ok": False, "notes": "rendering output.txt took longer than 0.2 s (the renderer was "
                              "stopped)"}
    assert not (dirs[1] / "slow.png").exists()
    assert render(dirs, {"output": "next.png"})["ok"] is True     # a new renderer starts


def test_without_resvg_the_check_fails_naming_the_extra(dirs: tuple[Path, Path],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "resvg", None)       # as if it were not installed
    assert render(dirs, {}) == {"ok": False, "notes": (
        "render_svg needs resvg, which is not installed: pip install 'resvg>=0.2'"),
        "details": {"missing_extra": "svg", "install": "pip install 'resvg>=0.2'"}}


# --- nothing outside the SVG is ever loaded ---------------------------------------------


def blank(dirs: tuple[Path, Path], name: str) -> bytes:
    render(dirs, {"output": name}, f'<svg {NS} width="50" height="50"></svg>')
    return (dirs[1] / name).read_bytes()


def test_local_files_are_never_loaded(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(png(50, 50))
    (dirs[0] / "beside.png").write_bytes(png(50, 50))
    empty = blank(dirs, "blank.png")
    for i, href in enumerate([f"file://{secret}", str(secret), "beside.png",
                              "../run/beside.png", f"file:{secret}"]):
        for attr in ("href", "xlink:href"):
            svg = (f'<svg {NS} width="50" height="50"><image {attr}="{href}" width="50" '
                   'height="50"/></svg>')
            result = render(dirs, {"output": f"{i}-{attr[0]}.png"}, svg)
            assert result["ok"] is True and result["details"]["left_out"] == [href]
            assert result["notes"] == (f"left out 1 external reference(s), never loaded: "
                                       f"{href}")
            assert (dirs[1] / f"{i}-{attr[0]}.png").read_bytes() == empty, href


def test_a_local_http_server_sees_no_request(dirs: tuple[Path, Path]) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.setblocking(False)
        url = f"http://127.0.0.1:{server.getsockname()[1]}"
        svg = (f'<svg {NS} width="50" height="50"><style>@import url({url}/a.css);</style>'
               f'<image href="{url}/pic.png" width="50" height="50"/>'
               f'<filter id="f"><feImage href="{url}/f.png"/></filter>'
               f'<use xlink:href="{url}/other.svg#x"/><rect width="5" height="5" '
               'filter="url(#f)"/></svg>')
        result = render(dirs, {}, svg)
        assert result["ok"] is True
        assert result["details"]["left_out"] == [
            f"@import url({url}/a.css);", f"{url}/pic.png", f"{url}/f.png",
            f"{url}/other.svg#x"]
        with pytest.raises(BlockingIOError):
            server.accept()                  # no connection was ever attempted


def test_embedded_images_are_drawn_unless_huge(dirs: tuple[Path, Path]) -> None:
    empty = blank(dirs, "blank.png")
    small = base64.b64encode(png(50, 50)).decode()
    svg = (f'<svg {NS} width="50" height="50"><image href="data:image/png;base64,{small}" '
           'width="50" height="50"/></svg>')
    assert "left_out" not in render(dirs, {"output": "small.png"}, svg).get("details", {})
    assert (dirs[1] / "small.png").read_bytes() != empty
    ihdr = b"IHDR" + struct.pack(">IIBBBBB", 30000, 30000, 8, 2, 0, 0, 0)   # header only
    bomb = (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + ihdr
            + struct.pack(">I", zlib.crc32(ihdr)) + b"rest of a decompression bomb")
    svg = svg.replace(small, base64.b64encode(bomb).decode())
    result = render(dirs, {"output": "bomb.png"}, svg)
    assert result["ok"] is True and len(result["details"]["left_out"]) == 1
    assert (dirs[1] / "bomb.png").read_bytes() == empty
    inner = base64.b64encode(f'<svg {NS}><image href="/etc/x.png"/></svg>'.encode()).decode()
    svg = svg.replace(base64.b64encode(bomb).decode(), inner).replace("image/png",
                                                                       "image/svg+xml")
    assert len(render(dirs, {"output": "nested.png"}, svg)["details"]["left_out"]) == 1


# --- the same PNG bytes as the renderer before (resvg-py 0.5) -----------------------------

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "render_svg" / "resvg_py_renders.json"
SUITE = Path(__file__).resolve().parents[2] / "suites" / "pelican" / "configs" / "responses.jsonl"


def recorded_svgs() -> dict[str, str]:
    """The SVGs the fixture was made from: its own, and the pelican suite's answers."""
    import json

    svgs = dict(json.loads(FIXTURE.read_text())["svgs"])
    for line in SUITE.read_text().splitlines():
        answer = json.loads(line)
        if "<svg" in answer.get("output", ""):
            svgs[f"pelican {answer['task']} {answer['model']}"] = answer["output"]
    return svgs


def test_every_png_has_the_bytes_the_renderer_before_gave(dirs: tuple[Path, Path]) -> None:
    """147 renders (the pelican suite's answers, the bench's drawings, sizes given or not,
    backgrounds in every CSS form) recorded with resvg-py 0.5, the binding used before: the
    same sha256 for each, so the judge answers the suite recorded by PNG hash still match."""
    import hashlib
    import json

    svgs = recorded_svgs()
    renders = json.loads(FIXTURE.read_text())["renders"]
    assert len(renders) == 147 and len(svgs) == 26
    for i, want in enumerate(renders):
        name = f"{i}.png"
        got = render(dirs, {**want["options"], "output": name}, svgs[want["svg"]])
        assert got["ok"] is want["ok"], (want, got)
        if want["ok"]:
            found = hashlib.sha256((dirs[1] / name).read_bytes()).hexdigest()
            assert found == want["sha256"], (want["svg"], want["options"])


@pytest.mark.parametrize("colour,rgba", [
    ("white", (255, 255, 255, 255)), (" ReD ", (255, 0, 0, 255)),
    ("transparent", (0, 0, 0, 0)), ("#abc", (0xaa, 0xbb, 0xcc, 255)),
    ("#ff000080", (255, 0, 0, 128)), ("rgb(50%, 50%, 50%)", (128, 128, 128, 255)),
    ("rgb(1 2 3)", (1, 2, 3, 255)), ("rgba(10, 20, 30, 0.5)", (10, 20, 30, 128)),
    ("rgb(300, 2.5, 0.4)", (255, 3, 0, 255)), ("hsl(230, 57%, 54%)", (71, 93, 205, 255)),
    ("hsla(120, 100%, 75%, 0.5)", (128, 255, 128, 128)),
    ("rebeccapurple", None), ("rgba(10, 20, 30, 5%)", None), ("#12345", None),
    ("red blue", None), ("rgb (1, 2, 3)", None)])
def test_a_background_is_read_as_resvg_reads_a_css_colour(colour: str,
                                                          rgba: tuple[int, ...] | None) -> None:
    from smevals.checkers.csscolor import parse_color

    assert parse_color(colour) == rgba


def test_a_background_that_is_no_colour_fails_the_check(dirs: tuple[Path, Path]) -> None:
    assert render(dirs, {"background": "rebeccapurple"}) == {
        "ok": False, "notes": "background: 'rebeccapurple' is not a CSS colour"}
    assert list(dirs[1].iterdir()) == []


def test_no_empty_resources_folder_is_left_behind(tmp_path: Path) -> None:
    """The renderer is killed (at a deadline, or when smevals ends), never asked to stop, so
    its empty resources folder is made (in TMPDIR) and removed by smevals: a process that
    rendered, had a renderer stopped at its deadline, and rendered again used one folder and
    leaves none behind."""
    temp = tmp_path / "temp"
    temp.mkdir()
    script = f"""
import sys
from pathlib import Path
from tests.helpers.checkers import run
base = Path(sys.argv[1])
(base / "run").mkdir(); (base / "ws").mkdir()
def render(name, svg, timeout=None):
    return run("render_svg", {{"output": name}}, svg, run_dir=base / "run",
               workspace=base / "ws", timeout=timeout).ok
slow = ('<svg {NS} width="4096" height="4096"><filter id="f"><feTurbulence '
        'baseFrequency="0.01" numOctaves="10"/><feGaussianBlur stdDeviation="50"/>'
        '</filter>' + '<rect width="4096" height="4096" filter="url(#f)"/>' * 40 + '</svg>')
print(render("a.png", {CIRCLE!r}), render("b.png", slow, 0.2), render("c.png", {CIRCLE!r}))
print(*(p.name[:12] for p in (base / "temp").iterdir()))
"""
    env = {**os.environ, "TMPDIR": str(temp)}
    proc = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, "True False True\nsmevals-svg-\n", "")
    assert sorted(p.name for p in temp.iterdir()) == []
