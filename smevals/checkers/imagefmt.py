"""Raster images by their first bytes: PNG, JPEG, GIF and WebP, and their pixel size.

Used by `render_svg` (an embedded `data:` image larger than the pixel limit is left out)
and by the judge checkers' `images:` (a file that is not one of these is refused).
"""

from __future__ import annotations

import struct

__all__ = ["MEDIA_TYPES", "dimensions", "media_type"]

MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def media_type(data: bytes) -> str | None:
    """The image's media type by its magic bytes, or None when it is none of the four."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def dimensions(data: bytes) -> tuple[int, int] | None:
    """(width, height) read from the header, or None when it cannot be read."""
    kind = media_type(data)
    try:
        if kind == "image/png" and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return width, height
        if kind == "image/gif":
            width, height = struct.unpack("<HH", data[6:10])
            return width, height
        if kind == "image/jpeg":
            return _jpeg(data)
        if kind == "image/webp":
            return _webp(data)
    except struct.error:
        return None
    return None


_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


def _jpeg(data: bytes) -> tuple[int, int] | None:
    pos = 2
    while pos + 4 <= len(data):
        if data[pos] != 0xFF:
            return None
        marker = data[pos + 1]
        if marker == 0xFF:              # fill byte
            pos += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            pos += 2
            continue
        (length,) = struct.unpack(">H", data[pos + 2:pos + 4])
        if marker in _SOF:
            height, width = struct.unpack(">HH", data[pos + 5:pos + 9])
            return width, height
        if length < 2:
            return None
        pos += 2 + length
    return None


def _webp(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        return (int.from_bytes(data[24:27], "little") + 1,
                int.from_bytes(data[27:30], "little") + 1)
    return None
