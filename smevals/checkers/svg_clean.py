"""An SVG made safe to render: external references left out, its own size read.

The document is parsed with the stdlib's expat (entity declarations refused, as in
`xml_valid`) and written back with only elements, attributes and text: comments,
processing instructions and the DOCTYPE go. An `href` (any prefix: `xlink:href`) that is
not a fragment (`#id`) or a `data:` URL of a PNG, JPEG, GIF or WebP image of at most
MAX_EMBEDDED_PIXELS is left out, so `file://`, `http://`, absolute and relative paths are
never loaded; so are CSS `@import` rules. What was left out is reported.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

from smevals.checkers.imagefmt import dimensions, media_type

MAX_EMBEDDED_PIXELS = 4096 * 4096
_IMPORT = re.compile(r"@import\b[^;]*;?", re.IGNORECASE)
_LENGTH = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(px|pt|pc|mm|cm|in)?\s*$")
_UNITS = {None: 1.0, "px": 1.0, "pt": 4 / 3, "pc": 16.0, "mm": 96 / 25.4, "cm": 96 / 2.54,
          "in": 96.0}


class SvgProblem(Exception):
    """Not an SVG that can be rendered: the reason."""


@dataclass
class Cleaned:
    text: str
    size: tuple[float, float]                  # the SVG's own size in px, as far as read
    left_out: list[str] = field(default_factory=list)


class _Forbidden(Exception):
    pass


def _forbid(*_args: Any) -> Any:
    raise _Forbidden()


def clean(svg: bytes) -> Cleaned:
    out: list[str] = []
    left_out: list[str] = []
    stack: list[str] = []
    root: dict[str, str] = {}

    def start(name: str, attrs: list[str]) -> None:
        if not stack and not root:
            root.update(zip(attrs[::2], attrs[1::2], strict=True))
            root["\0name"] = name
        stack.append(name)
        kept = []
        for key, value in zip(attrs[::2], attrs[1::2], strict=True):
            if (key == "href" or key.endswith(":href")) and not _safe_ref(value):
                left_out.append(value.strip()[:120])
                continue
            kept.append(f' {key}="{_escape(value, True)}"')
        out.append(f"<{name}{''.join(kept)}>")

    def end(name: str) -> None:
        stack.pop()
        out.append(f"</{name}>")

    def text(data: str) -> None:
        if stack and stack[-1].rpartition(":")[2] == "style" and "@import" in data.lower():
            left_out.extend(m.group(0)[:120] for m in _IMPORT.finditer(data))
            data = _IMPORT.sub("", data)
        out.append(_escape(data, False))

    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = _forbid
    parser.UnparsedEntityDeclHandler = _forbid
    parser.ExternalEntityRefHandler = _forbid
    parser.ordered_attributes = True
    parser.buffer_text = True
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    try:
        parser.Parse(svg, True)
    except _Forbidden:
        raise SvgProblem("XML entity declarations are not allowed") from None
    except expat.ExpatError as error:
        raise SvgProblem(f"not well-formed XML: {error}") from None
    name = root.get("\0name", "")
    if name.rpartition(":")[2] != "svg":
        raise SvgProblem(f"the root element is <{name}>, not <svg>")
    return Cleaned("".join(out), _size(root), left_out)


_TEXT = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_TEXT_TABLE = str.maketrans(_TEXT)
_ATTRIBUTE_TABLE = str.maketrans({**_TEXT, '"': "&quot;", "\n": "&#10;", "\t": "&#9;",
                                  "\r": "&#13;"})
_SPECIAL = re.compile(r'[&<>"\n\t\r]')


def _escape(value: str, attribute: bool) -> str:
    """`value` with the characters XML gives a meaning written as references (one pass)."""
    if _SPECIAL.search(value) is None:
        return value
    return value.translate(_ATTRIBUTE_TABLE if attribute else _TEXT_TABLE)


def _safe_ref(value: str) -> bool:
    ref = value.strip()
    if ref.startswith("#"):
        return True
    head, comma, payload = ref.partition(",")
    if not comma or not head.lower().startswith("data:") or not head.lower().endswith(
            ";base64"):
        return False
    try:
        data = base64.b64decode("".join(payload.split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    size = dimensions(data) if media_type(data) else None
    return size is not None and size[0] * size[1] <= MAX_EMBEDDED_PIXELS


def _size(root: dict[str, str]) -> tuple[float, float]:
    """The root's width and height in px (units converted; a missing one from the viewBox
    and its aspect; else 100, as resvg does)."""
    width, height = _length(root.get("width")), _length(root.get("height"))
    box = _view_box(root.get("viewBox"))
    if box is not None:
        if width is None and height is None:
            return box
        if width is None:
            assert height is not None
            return height * box[0] / box[1], height
        if height is None:
            return width, width * box[1] / box[0]
    return (100.0 if width is None else width, 100.0 if height is None else height)


def _length(value: str | None) -> float | None:
    match = _LENGTH.match(value or "")
    if match is None:
        return None
    return float(match.group(1)) * _UNITS[match.group(2)]


def _view_box(value: str | None) -> tuple[float, float] | None:
    parts = (value or "").replace(",", " ").split()
    try:
        numbers = [float(p) for p in parts]
    except ValueError:
        return None
    if len(numbers) != 4 or numbers[2] <= 0 or numbers[3] <= 0:
        return None
    return numbers[2], numbers[3]
