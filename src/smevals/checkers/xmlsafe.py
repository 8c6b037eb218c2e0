"""The one place smevals reads untrusted XML and SVG: a parser that never expands an entity,
and the two safe copies of an SVG made with it.

- `parse` is the stdlib's expat with parameter-entity parsing off and handlers that refuse
  any `<!ENTITY` declaration and any external entity (the defusedxml rule, whatever the
  expat version): nothing is ever fetched or expanded. `xml_valid` checks with it.
- `clean` (render_svg): an SVG made safe to render, external references left out, its own
  size read. Written back with only elements, attributes and text (comments, processing
  instructions and the DOCTYPE go). An `href` (any prefix: `xlink:href`) that is not a
  fragment (`#id`) or an embedded image (`embedded_image`) is left out, so `file://`,
  `http://`, absolute and relative paths are never loaded; so are CSS `@import` rules.
  What was left out is reported.
- `sanitise` (the web report): the only form in which the site shows an untrusted SVG,
  written out again from an allow-list:
  - elements: the SVG elements that draw (shapes, text, gradients, patterns, markers,
    masks, clip paths, filters, `use`, `image`, `style`, animation); any other element
    (`script`, `foreignObject`, `iframe`, `set`, an element of another namespace such as
    Inkscape's) is dropped with everything in it; `a` becomes a `g` (its children stay,
    the link goes);
  - attributes: no event handler (`on...`), no other namespace; `href` only to a fragment
    of the same SVG (`#id`) or, on `image` and `feImage`, an embedded image; any value that
    refers outside (`url(...)` not to `#id`, `image-set(`, `@import`, a CSS escape) is
    dropped (`fill` and `stroke` become `none`, as a browser draws an unreachable paint
    server); an animation may not target `href`, an event handler or `style`;
  - `<style>`: kept when its CSS passes the same test, else dropped whole.
  In an `<img>`, browsers neither run an SVG's scripts nor load what it refers to; the
  sanitised copy is for when someone opens the picture directly (from a static host with
  no Content-Security-Policy) and for defence in depth.

An embedded image is a base64 `data:` URL of a PNG, JPEG, GIF or WebP (by its bytes, not
its label) whose header gives a size within the caller's pixel limit.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from xml.parsers import expat

from smevals.files.imagefmt import MAX_SHOWN_PIXELS, dimensions


class Entities(Exception):
    """The document declares an entity or refers to an external one."""


def _refuse(*_args: Any) -> Any:
    raise Entities()


def parse(data: bytes, start: Callable[[str, list[str]], None] | None = None,
          end: Callable[[str], None] | None = None, text: Callable[[str], None] | None = None,
          namespaces: bool = False, buffer_text: bool = False) -> None:
    """Parse `data` with the handlers given (attributes as an ordered list; with
    `namespaces`, names are `URI local`). Raises Entities or expat.ExpatError (also for an
    encoding expat cannot read)."""
    parser = expat.ParserCreate(namespace_separator=" " if namespaces else None)
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = _refuse
    parser.UnparsedEntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    parser.ordered_attributes = True
    parser.buffer_text = buffer_text
    if start is not None:
        parser.StartElementHandler = start
    if end is not None:
        parser.EndElementHandler = end
    if text is not None:
        parser.CharacterDataHandler = text
    try:
        parser.Parse(data, True)
    except ValueError as error:     # "multi-byte encodings are not supported" (UTF-16-BE...)
        if type(error) is not ValueError:       # a handler's own (svgsafe's Refused)
            raise
        raise expat.ExpatError(str(error)) from None


_DATA_IMAGE = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,([A-Za-z0-9+/=\s]*)$",
                         re.IGNORECASE)


def embedded_image(value: str, max_pixels: int) -> bool:
    """Whether `value` is a base64 `data:` URL of a PNG, JPEG, GIF or WebP image (by its
    bytes) of at most `max_pixels`."""
    match = _DATA_IMAGE.match(value.strip())
    if match is None:
        return False
    try:
        data = base64.b64decode("".join(match.group(2).split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    size = dimensions(data)
    return size is not None and size[0] > 0 and size[1] > 0 and size[0] * size[1] <= max_pixels


def escape(value: str, attribute: bool = False) -> str:
    """Text, or an attribute value (in double quotes), as XML."""
    if not _SPECIAL.search(value):
        return value
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if attribute:
        value = value.replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;")
        value = value.replace("\r", "&#13;")
    return value


_SPECIAL = re.compile(r"[&<>\"\n\t\r]")


# --- the copy render_svg renders ------------------------------------------------------

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
            kept.append(f' {key}="{escape(value, True)}"')
        out.append(f"<{name}{''.join(kept)}>")

    def end(name: str) -> None:
        stack.pop()
        out.append(f"</{name}>")

    def text(data: str) -> None:
        if stack and stack[-1].rpartition(":")[2] == "style" and "@import" in data.lower():
            left_out.extend(m.group(0)[:120] for m in _IMPORT.finditer(data))
            data = _IMPORT.sub("", data)
        out.append(escape(data))

    try:
        parse(svg, start, end, text, buffer_text=True)
    except Entities:
        raise SvgProblem("XML entity declarations are not allowed") from None
    except expat.ExpatError as error:
        raise SvgProblem(f"not well-formed XML: {error}") from None
    name = root.get("\0name", "")
    if name.rpartition(":")[2] != "svg":
        raise SvgProblem(f"the root element is <{name}>, not <svg>")
    return Cleaned("".join(out), _size(root), left_out)


def _safe_ref(value: str) -> bool:
    return value.strip().startswith("#") or embedded_image(value, MAX_EMBEDDED_PIXELS)


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


# --- the copy the web report shows -----------------------------------------------------

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
MAX_BYTES = 1 << 20                 # bigger SVGs are offered for download only
_FE = ["Blend", "ColorMatrix", "ComponentTransfer", "Composite", "ConvolveMatrix",
       "DiffuseLighting", "DisplacementMap", "DistantLight", "DropShadow", "Flood", "FuncA",
       "FuncB", "FuncG", "FuncR", "GaussianBlur", "Image", "Merge", "MergeNode", "Morphology",
       "Offset", "PointLight", "SpecularLighting", "SpotLight", "Tile", "Turbulence"]
ELEMENTS = frozenset([
    "svg", "g", "defs", "symbol", "use", "title", "desc", "switch", "view",
    "path", "rect", "circle", "ellipse", "line", "polyline", "polygon",
    "text", "tspan", "textPath", "linearGradient", "radialGradient", "stop", "pattern",
    "clipPath", "mask", "marker", "filter", "image", "style",
    "animate", "animateTransform", "animateMotion", "mpath", *(f"fe{n}" for n in _FE)])
ANIMATIONS = frozenset(["animate", "animateTransform", "animateMotion"])
WITH_IMAGE = frozenset(["image", "feImage"])
PAINT = frozenset(["fill", "stroke"])
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_URL = re.compile(r"url\s*\(\s*(['\"]?)\s*([^'\")\s]*)", re.IGNORECASE)
_FOREIGN_CSS = re.compile(r"@import|image-set\s*\(|\bsrc\s*\(|\\|expression\s*\(",
                          re.IGNORECASE)


class Refused(ValueError):
    """The SVG cannot be shown: not well-formed XML, not an SVG, or declares entities."""


def css_is_local(text: str) -> bool:
    """Whether CSS (a `<style>`, a `style=` or a presentation attribute) refers to nothing
    outside the SVG: every url() names a fragment, and no escape can hide one."""
    if "(" not in text and "@" not in text and "\\" not in text:
        return True                    # most values: a number, a colour, path data
    if _FOREIGN_CSS.search(text):
        return False
    return all(target.startswith("#") for _quote, target in _URL.findall(text))


def href_ok(element: str, value: str, max_pixels: int = MAX_SHOWN_PIXELS) -> bool:
    if value.strip().startswith("#"):
        return True
    return element in WITH_IMAGE and embedded_image(value, max_pixels)


class _Writer:
    """Writes the kept elements as they are parsed; `skip` counts the open elements of a
    dropped subtree."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.open: list[str | None] = []      # the name written, or None for "a" kept as g
        self.skip = 0
        self.style_at: int | None = None
        self.root = True
        self.ns = SVG_NS                      # "" for an SVG that forgot its xmlns

    def start(self, name: str, attrs: list[str]) -> None:
        ns, _sep, local = name.rpartition(" ")
        if self.root:
            if ns not in (SVG_NS, "") or local != "svg":
                raise Refused("the root element is not <svg> of the SVG namespace")
            self.root, self.ns = False, ns
        if self.skip or ns != self.ns or not (local in ELEMENTS or local == "a"):
            self.skip += 1
            return
        kept = self.attributes(local, attrs)
        if kept is None:
            self.skip += 1
            return
        written = "g" if local == "a" else local
        if local == "style":
            self.style_at = len(self.out)
        xmlns = f' xmlns="{SVG_NS}"' if not self.open else ""
        self.out.append(f"<{written}{xmlns}{kept}>")
        self.open.append(written)

    def attributes(self, element: str, attrs: list[str]) -> str | None:
        """The attributes kept, written out; None when the element must go (an image
        without an acceptable picture, an animation of a forbidden attribute)."""
        kept: list[tuple[str, str]] = []
        if element == "a":
            return ""
        for key, value in zip(attrs[::2], attrs[1::2], strict=True):
            ns, _sep, local = key.rpartition(" ")
            if local == "href" and ns in ("", XLINK_NS):
                if href_ok(element, value):
                    kept.append(("href", value))
                elif element in WITH_IMAGE:
                    return None
                continue
            if ns or not _NAME.match(local) or local.lower().startswith("on"):
                continue
            target = value.strip().lower().split(":")[-1]
            if element in ANIMATIONS and local == "attributeName" and \
                    (target.startswith("on") or target in ("href", "style")):
                return None
            if not css_is_local(value):
                if local in PAINT:            # drawn as an unreachable paint server is
                    kept.append((local, "none"))
                continue
            kept.append((local, value))
        return "".join(f' {k}="{escape(v, attribute=True)}"' for k, v in kept)

    def end(self, _name: str) -> None:
        if self.skip:
            self.skip -= 1
            return
        written = self.open.pop()
        if written == "style" and self.style_at is not None:
            css = "".join(self.out[self.style_at + 1:])
            if not css_is_local(css):
                del self.out[self.style_at:]
                self.style_at = None
                return
            self.style_at = None
        self.out.append(f"</{written}>")

    def text(self, data: str) -> None:
        if not self.skip and self.open:
            self.out.append(escape(data))


def sanitise(data: bytes) -> bytes:
    """The sanitised copy of an SVG (UTF-8), or Refused with the reason."""
    if len(data) > MAX_BYTES:
        raise Refused(f"more than {MAX_BYTES:,} bytes")
    writer = _Writer()
    try:
        parse(data, writer.start, writer.end, writer.text, namespaces=True)
    except Entities:
        raise Refused("the SVG declares or refers to XML entities") from None
    except expat.ExpatError as exc:
        raise Refused(f"not well-formed XML: {exc}") from None
    if writer.root:
        raise Refused("no <svg> element")
    return "".join(writer.out).encode("utf-8")
