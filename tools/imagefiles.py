"""Picture files made by hand (zlib and struct): valid PNGs, a decompression bomb, and the
headers of the other formats the site recognises."""

from __future__ import annotations

import struct
import zlib


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + \
        struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width: int, height: int, rgb: tuple[int, int, int] = (220, 80, 40)) -> bytes:
    """A valid RGB PNG of one colour."""
    row = b"\x00" + bytes(rgb) * width
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) +
            _chunk(b"IDAT", zlib.compress(row * height, 9)) + _chunk(b"IEND", b""))


def bomb_png(side: int = 20000) -> bytes:
    """A valid 1-bit greyscale PNG of side x side pixels (400 million by default) that
    is a few tens of KB: a browser would decode it into gigabytes."""
    ihdr = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    row = b"\x00" * (1 + (side + 7) // 8)
    packer = zlib.compressobj(9)
    parts = [packer.compress(row * 500) for _ in range(side // 500)]
    parts.append(packer.compress(row * (side % 500)))
    parts.append(packer.flush())
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", b"".join(parts)) +
            _chunk(b"IEND", b""))


def jpeg_head(width: int, height: int, app_bytes: int = 0) -> bytes:
    """The start of a baseline JPEG: SOI, APP1 segments of `app_bytes` in all, then SOF0."""
    app = b""
    while app_bytes > 0:
        part = min(app_bytes, 65000)
        app += b"\xff\xe1" + struct.pack(">H", part + 2) + b"E" * part
        app_bytes -= part
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app + sof + b"\xff\xda"


def gif_head(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00"


def webp_head(width: int, height: int) -> bytes:
    """A VP8X (extended) WebP header."""
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00" + \
        (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return b"RIFF" + struct.pack("<I", 4 + len(vp8x)) + b"WEBP" + vp8x


def bmp_head(width: int, height: int) -> bytes:
    return b"BM" + b"\x00" * 12 + struct.pack("<Iii", 40, width, -height) + b"\x00" * 28


def avif_head(width: int, height: int) -> bytes:
    ftyp = struct.pack(">I", 20) + b"ftypavif" + b"\x00" * 8
    ispe = struct.pack(">I", 20) + b"ispe" + b"\x00" * 4 + struct.pack(">II", width, height)
    return ftyp + ispe
