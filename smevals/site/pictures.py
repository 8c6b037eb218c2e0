"""What a picture file really is, read from its first bytes, never from its name.

A file is shown as an image only when its extension is an image's and its magic bytes are
those of PNG, JPEG, GIF, WebP, BMP or AVIF, and its header's width and height (read
without decoding a single pixel) come to at most `MAX_PIXELS`. A decompression bomb (a
tiny PNG that claims 20,000 x 20,000 pixels) is therefore never handed to the browser,
which would decode it in full whatever size CSS gives it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

MAX_PIXELS = 25_000_000          # a 5,000 x 5,000 picture; a 24-megapixel photo passes
HEAD_BYTES = 256 * 1024          # a JPEG's size must be in its first 256 KiB
EXTENSIONS = ("png", "jpg", "jpeg", "gif", "webp", "avif", "bmp")
MIME = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "avif": "image/avif", "bmp": "image/bmp"}
NAMES = {"png": "PNG", "jpeg": "JPEG", "gif": "GIF", "webp": "WebP", "avif": "AVIF",
         "bmp": "BMP"}
# JPEG start-of-frame markers (they carry the size): C0-CF but C4, C8 and CC
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


@dataclass(frozen=True)
class Picture:
    """A raster picture's format and size, and why it is not shown (None: it is)."""

    format: str | None           # png, jpeg, ... or None when the bytes are no image
    width: int = 0
    height: int = 0
    refused: str | None = None

    @property
    def mime(self) -> str:
        return MIME.get(self.format or "", "application/octet-stream")

    @property
    def shown(self) -> bool:
        return self.format is not None and self.refused is None


def sniff(head: bytes) -> str | None:
    """The image format of these first bytes, or None."""
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


def inspect(head: bytes, limit: int = MAX_PIXELS) -> Picture:
    """The picture in `head` (the file's first HEAD_BYTES bytes)."""
    fmt = sniff(head)
    if fmt is None:
        return Picture(None, refused="its bytes are not those of a PNG, JPEG, GIF, WebP, "
                                     "AVIF or BMP picture")
    try:
        size = _SIZE[fmt](head)
    except (struct.error, IndexError, ValueError):
        size = None
    if size is None or size[0] <= 0 or size[1] <= 0:
        return Picture(fmt, refused=f"no valid {NAMES[fmt]} header with its size")
    width, height = size
    if width * height > limit:
        return Picture(fmt, width, height,
                       refused=f"{width:,} × {height:,} pixels, over the limit of {limit:,}")
    return Picture(fmt, width, height)


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
