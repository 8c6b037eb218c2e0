"""Raster images by their first bytes, never by their name: PNG, JPEG, GIF, WebP, AVIF and
BMP, and their size in pixels read from the header without decoding a pixel.

The one reader of image headers: `render_svg` (an embedded `data:` image over the pixel
limit is left out), the judge checkers' `images:` (a file that is not a PNG, JPEG, GIF or
WebP is refused) and the web report's pictures (smevals/site/pictures.py) use it.
"""

from __future__ import annotations

import struct

__all__ = ["MAX_SHOWN_PIXELS", "MEDIA_TYPES", "dimensions", "media_type", "size", "sniff"]

# The most pixels of a picture the web report shows (a 5,000 x 5,000 one; a 24-megapixel
# photo passes), also of an image embedded in an SVG it shows (checkers/xmlsafe.py).
MAX_SHOWN_PIXELS = 25_000_000
# What the judge checkers send (OpenAI-compatible servers accept these four).
MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_SENT = ("png", "jpeg", "gif", "webp")      # their formats
# JPEG start-of-frame markers (they carry the size): C0-CF but C4, C8 and CC
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def sniff(head: bytes) -> str | None:
    """The image format of these first bytes (png, jpeg, gif, webp, avif, bmp), or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head[4:8] == b"ftyp" and head[8:12] in (b"avif", b"avis"):
        return "avif"
    if head[:2] == b"BM" and len(head) >= 26:
        return "bmp"
    return None


def size(fmt: str, head: bytes) -> tuple[int, int] | None:
    """(width, height) of a picture of format `fmt` from its header, or None."""
    try:
        return _SIZE[fmt](head)
    except (struct.error, IndexError, ValueError, KeyError):
        return None


def media_type(data: bytes) -> str | None:
    """The media type of a PNG, JPEG, GIF or WebP image by its magic bytes, else None."""
    fmt = sniff(data)
    return f"image/{fmt}" if fmt in _SENT else None


def dimensions(data: bytes) -> tuple[int, int] | None:
    """(width, height) of a PNG, JPEG, GIF or WebP image from its header, else None."""
    fmt = sniff(data)
    return size(fmt, data) if fmt is not None and fmt in _SENT else None


def _png(head: bytes) -> tuple[int, int] | None:
    if head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def _jpeg(head: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 4 <= len(head):
        if head[at] != 0xFF:
            return None
        marker = head[at + 1]
        if marker == 0xFF:                 # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):   # markers without a length
            at += 2
            continue
        (length,) = struct.unpack(">H", head[at + 2:at + 4])
        if marker in _SOF:
            height, width = struct.unpack(">HH", head[at + 5:at + 9])
            return width, height
        if marker in (0xD9, 0xDA) or length < 2:     # end of image, start of scan
            return None
        at += 2 + length
    return None


def _gif(head: bytes) -> tuple[int, int]:
    width, height = struct.unpack("<HH", head[6:10])
    return width, height


def _webp(head: bytes) -> tuple[int, int] | None:
    chunk = head[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(head[24:27], "little") + 1
        height = int.from_bytes(head[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L" and head[20] == 0x2F:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and head[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", head[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


def _avif(head: bytes) -> tuple[int, int] | None:
    """The largest `ispe` (image spatial extent) property in the header."""
    sizes = []
    at = head.find(b"ispe")
    while at >= 0 and at + 16 <= len(head):
        sizes.append(struct.unpack(">II", head[at + 8:at + 16]))
        at = head.find(b"ispe", at + 4)
    return max(sizes, key=lambda s: s[0] * s[1]) if sizes else None


def _bmp(head: bytes) -> tuple[int, int]:
    (header,) = struct.unpack("<I", head[14:18])
    if header == 12:
        width, height = struct.unpack("<HH", head[18:22])
        return width, height
    width, height = struct.unpack("<ii", head[18:26])
    return width, abs(height)


_SIZE = {"png": _png, "jpeg": _jpeg, "gif": _gif, "webp": _webp, "avif": _avif, "bmp": _bmp}
