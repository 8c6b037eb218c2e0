"""A sanitised copy of an untrusted SVG: the only form in which the site shows one.

The SVG is parsed (expat, no DTD entities, nothing fetched) and written out again from an
allow-list, so what comes out is plain SVG and nothing the input could smuggle through
its spelling:

- elements: the SVG elements that draw (shapes, text, gradients, patterns, markers,
  masks, clip paths, filters, `use`, `image`, `style`, animation); any other element
  (`script`, `foreignObject`, `iframe`, `set`, an element of another namespace such as
  Inkscape's) is dropped with everything in it; `a` becomes a `g` (its children stay,
  the link goes);
- attributes: no event handler (`on...`), no other namespace; `href` only to a fragment of
  the same SVG (`#id`) or, on `image` and `feImage`, a `data:` PNG, JPEG, GIF or WebP
  within the pixel limit; any value that refers outside (`url(...)` not to `#id`,
  `image-set(`, `@import`, a CSS escape) is dropped (`fill` and `stroke` become `none`,
  as a browser draws an unreachable paint server); an animation may not target `href`,
  an event handler or `style`;
- `<style>`: kept when its CSS passes the same test, else dropped whole.

In an `<img>`, browsers neither run an SVG's scripts nor load what it refers to; the
sanitised copy is for when someone opens the picture directly (from a static host with no
Content-Security-Policy) and for defence in depth.
"""

from __future__ import annotations

import base64
import binascii
import re
from xml.parsers import expat

from smevals.site import pictures

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
_SPECIAL = re.compile(r"[&<>\"]")
_DATA_IMAGE = re.compile(r"^data:image/(png|jpeg|gif|webp);base64,([A-Za-z0-9+/=\s]*)$")


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


def href_ok(element: str, value: str) -> bool:
    value = value.strip()
    if value.startswith("#"):
        return True
    if element not in WITH_IMAGE:
        return False
    match = _DATA_IMAGE.match(value)
    if match is None:
        return False
    try:
        data = base64.b64decode("".join(match.group(2).split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return pictures.inspect(data[:pictures.HEAD_BYTES]).shown


def escape(text: str, quote: bool = False) -> str:
    if not _SPECIAL.search(text):
        return text
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;") if quote else text


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
        return "".join(f' {k}="{escape(v, quote=True)}"' for k, v in kept)

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


def _no_entities(*_args: object) -> int:
    raise Refused("the SVG declares or refers to XML entities")


def sanitise(data: bytes) -> bytes:
    """The sanitised copy of an SVG (UTF-8), or Refused with the reason."""
    if len(data) > MAX_BYTES:
        raise Refused(f"more than {MAX_BYTES:,} bytes")
    writer = _Writer()
    parser = expat.ParserCreate(namespace_separator=" ")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = _no_entities
    parser.ExternalEntityRefHandler = _no_entities
    parser.ordered_attributes = True
    parser.StartElementHandler = writer.start
    parser.EndElementHandler = writer.end
    parser.CharacterDataHandler = writer.text
    try:
        parser.Parse(data, True)
    except expat.ExpatError as exc:
        raise Refused(f"not well-formed XML: {exc}") from None
    if writer.root:
        raise Refused("no <svg> element")
    return "".join(writer.out).encode("utf-8")
