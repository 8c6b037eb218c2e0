"""`images:` of the judge checkers: files of the Grade's workspace or of the Run, sent to the
judge as image parts of the user message.

Each must be a PNG, JPEG, GIF or WebP file (by its first bytes) of at most MAX_IMAGE_BYTES;
a missing file or another kind fails the Check before any call. The request names each
image by its media type and sha256 (so the judge cache key and the evidence name exactly
what was judged); the bytes travel only to the judge.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from typing import Any

from smevals.checkers.base import CheckFailure, CheckInput, fail

MAX_IMAGE_BYTES = 20 << 20
MAX_IMAGES = 16

OPTION: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "pattern": r"\S"},
        {"type": "array", "minItems": 1, "maxItems": MAX_IMAGES,
         "items": {"type": "string", "pattern": r"\S", "x-expect": "a file name"}},
    ],
    "x-expect": f"an image file name, or a list of 1 to {MAX_IMAGES}",
}


@dataclass(frozen=True)
class Image:
    name: str
    media_type: str
    sha256: str
    data: bytes

    def request(self) -> dict[str, str]:
        """What the judge request (and so the cache key) says of the image."""
        return {"media_type": self.media_type, "sha256": self.sha256}

    def evidence(self) -> dict[str, Any]:
        return {"name": self.name, "media_type": self.media_type, "sha256": self.sha256,
                "bytes": len(self.data)}

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode('ascii')}"


def names(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    """Static problems of `images:` (for `smevals validate`): each a safe relative path."""
    from smevals.checkers.inputs import relative_path

    value = opts.get("images")
    if not isinstance(value, str | list):
        return []
    for name in names(value):
        try:
            relative_path(name)
        except CheckFailure as error:
            return [("images", error.reason.replace("file:", "an image"))]
    return []


def load(opts: dict[str, Any], inp: CheckInput) -> tuple[Image, ...]:
    """The Check's images, read and checked; CheckFailure naming the first problem."""
    from smevals.checkers.inputs import find_file
    from smevals.files.imagefmt import MEDIA_TYPES, media_type

    found = []
    for name in names(opts.get("images")):
        try:
            path = find_file(inp, name)
        except CheckFailure as error:
            fail(f"option 'images': {error.reason}")
        size = path.stat().st_size
        if size > MAX_IMAGE_BYTES:
            fail(f"option 'images': {name} is {size} bytes, over the {MAX_IMAGE_BYTES}-byte "
                 "limit of an image")
        data = path.read_bytes()[:MAX_IMAGE_BYTES + 1]
        kind = media_type(data)
        if kind is None:
            hint = " (render an SVG to a PNG first: render_svg)" if b"<svg" in data[:4096] \
                else ""
            fail(f"option 'images': {name} is not an image the judge can be sent (one of "
                 f"{', '.join(t.split('/')[1].upper() for t in MEDIA_TYPES)}){hint}")
        found.append(Image(name, kind, hashlib.sha256(data).hexdigest(), data))
    return tuple(found)


def with_images(messages: list[dict[str, Any]], images: tuple[Image, ...]
                ) -> list[dict[str, Any]]:
    """The messages as an OpenAI-compatible server gets them: the last user message's text
    followed by one `image_url` part (a data URL) per image."""
    if not images:
        return messages
    last = max(i for i, m in enumerate(messages) if m["role"] == "user")
    parts: list[dict[str, Any]] = [{"type": "text", "text": messages[last]["content"]}]
    parts += [{"type": "image_url", "image_url": {"url": image.data_url()}}
              for image in images]
    return [*messages[:last], {**messages[last], "content": parts}, *messages[last + 1:]]
