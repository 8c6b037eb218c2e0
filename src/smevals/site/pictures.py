"""What a picture file really is, read from its first bytes, never from its name.

A file is shown as an image only when its extension is an image's and its magic bytes are
those of PNG, JPEG, GIF, WebP, BMP or AVIF, and its header's width and height (read
without decoding a single pixel) come to at most `MAX_PIXELS`. A decompression bomb (a
tiny PNG that claims 20,000 x 20,000 pixels) is therefore never handed to the browser,
which would decode it in full whatever size CSS gives it.
"""

from __future__ import annotations

from dataclasses import dataclass

from smevals.files.imagefmt import MAX_SHOWN_PIXELS, size, sniff

MAX_PIXELS = MAX_SHOWN_PIXELS    # a 5,000 x 5,000 picture; a 24-megapixel photo passes
HEAD_BYTES = 256 * 1024          # a JPEG's size must be in its first 256 KiB
EXTENSIONS = ("png", "jpg", "jpeg", "gif", "webp", "avif", "bmp")
MIME = {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "avif": "image/avif", "bmp": "image/bmp"}
NAMES = {"png": "PNG", "jpeg": "JPEG", "gif": "GIF", "webp": "WebP", "avif": "AVIF",
         "bmp": "BMP"}


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


def inspect(head: bytes, limit: int = MAX_PIXELS) -> Picture:
    """The picture in `head` (the file's first HEAD_BYTES bytes)."""
    fmt = sniff(head)
    if fmt is None:
        return Picture(None, refused="its bytes are not those of a PNG, JPEG, GIF, WebP, "
                                     "AVIF or BMP picture")
    found = size(fmt, head)
    if found is None or found[0] <= 0 or found[1] <= 0:
        return Picture(fmt, refused=f"no valid {NAMES[fmt]} header with its size")
    width, height = found
    if width * height > limit:
        return Picture(fmt, width, height,
                       refused=f"{width:,} × {height:,} pixels, over the limit of {limit:,}")
    return Picture(fmt, width, height)
