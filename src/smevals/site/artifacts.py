"""The files of Runs and Grades as the site shows them: untrusted bytes, never trusted names.

A file is looked up by the path its object's record lists, never by a path from a URL, and
opened only when that path is plain (no `..`, no absolute path, no backslash) and no
symlink lies on the way: a store edited by hand (or a hostile pull request) cannot make
the site read outside the object's folder.

Kinds, and how each is shown:

| kind   | shown as                                      | served as                        |
| ------ | --------------------------------------------- | -------------------------------- |
| text   | escaped text, and a link to the raw file      | text/plain; charset=utf-8        |
| image  | <img>                                         | image/png, ... (by its bytes)    |
| svg    | <img> of its sanitised copy (xmlsafe)         | text/plain; the copy as          |
|        |                                               | image/svg+xml, sandboxed         |
| binary | a download link                               | application/octet-stream, attachment |
| link   | the symlink's target, as text; never followed | -                                |

An `image` is a file with an image's extension whose bytes are a PNG, JPEG, GIF, WebP,
AVIF or BMP within the pixel limit (site.pictures); one that claims more pixels is a
`binary` (a decompression bomb is never handed to a browser), and one whose bytes are no
picture is `text` or `binary` by its content.
"""

from __future__ import annotations

import io
import os
import re
import stat
from collections import OrderedDict
from typing import IO, Any

from smevals.files.gitcat import SourceError
from smevals.site import pictures
from smevals.store.fssource import FsSource
from smevals.store.read import Obj, Store
from smevals.store.records import FileEntry

SVG_TYPE = "image/svg+xml"
TEXT_TYPE = "text/plain; charset=utf-8"
BINARY_TYPE = "application/octet-stream"
SNIFF = 8192                      # bytes looked at to tell text from binary
HEAD = pictures.HEAD_BYTES        # bytes to read to tell a file's kind (a JPEG's size)
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def safe_inner(path: str) -> bool:
    """Whether `path` (from a record) names a file inside its object folder."""
    if not path or "\0" in path or path.startswith("/"):     # a \ is a plain character
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))


def extension(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def looks_text(head: bytes) -> bool:
    """UTF-8 without NUL bytes (a multi-byte character cut at the end of `head` is fine)."""
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True


def kind_of(entry: FileEntry, head: bytes | None) -> str:
    """text, image, svg, binary, link, special or missing (unreadable), from the entry and
    the file's first bytes (`HEAD` of them, for an image's size)."""
    if "symlink" in entry:
        return "link"
    if entry.get("special"):
        return "special"
    if head is None:
        return "missing"
    ext = extension(str(entry.get("path", "")))
    text = looks_text(head[:SNIFF])
    if ext == "svg" and text:
        return "svg"
    if ext in pictures.EXTENSIONS:
        picture = pictures.inspect(head)
        if picture.shown:
            return "image"
        if picture.format is not None:
            return "binary"               # too many pixels, or a broken header
    return "text" if text else "binary"


def picture_of(entry: FileEntry, head: bytes | None) -> pictures.Picture | None:
    """The raster picture a file with an image's extension holds (shown or refused)."""
    if head is None or "symlink" in entry or entry.get("special") or \
            extension(str(entry.get("path", ""))) not in pictures.EXTENSIONS:
        return None
    return pictures.inspect(head)


def content_type(kind: str, head: bytes) -> str:
    """What a file of this kind is served as: an image by its bytes, an SVG as text (the
    picture is its sanitised copy), anything else as text or a download."""
    if kind == "image":
        return pictures.inspect(head).mime
    return TEXT_TYPE if kind in ("text", "svg") else BINARY_TYPE


def basename(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def static_name(path: str, kind: str) -> str:
    """A safe file name for a static copy: images and the sanitised copy of an SVG keep
    their extension; anything a browser could run gets one it cannot (`.txt` for text and
    an original SVG, `.bin` otherwise)."""
    name = _UNSAFE_NAME.sub("_", basename(path)).strip("._")[:80] or "file"
    if kind == "image":
        ext = extension(path)
        if not name.lower().endswith("." + ext):
            name += "." + ext
    elif kind == "picture":           # the sanitised copy of an SVG
        name += "" if name.lower().endswith(".svg") else ".svg"
    elif kind in ("text", "svg"):
        name += "" if name.lower().endswith(".txt") else ".txt"
    else:
        name += ".bin"
    return name


def _open_below(root: str, parts: list[str]) -> int:
    """A descriptor of root/parts[0]/.../parts[-1], following no symlink below `root`."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        # O_NONBLOCK: a FIFO put in a file's place must not hang the reader
        return os.open(parts[-1], os.O_RDONLY | NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)


def open_file(store: Store, obj: Obj[Any], path: str) -> IO[bytes] | None:
    """A working-tree file of `obj` opened for reading, or None when it is not a regular
    file reached without a symlink from the store's root (or `path` is not plain)."""
    if not safe_inner(path) or not isinstance(store.source, FsSource):
        return None
    if not safe_inner(obj.rel):
        return None
    try:
        fd = _open_below(str(store.root), [*obj.rel.split("/"), *path.split("/")])
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


def read_bytes(store: Store, obj: Obj[Any], path: str, limit: int | None = None) -> bytes | None:
    """The bytes of a file of `obj` (at most `limit`), or None when absent or unsafe."""
    if not safe_inner(path):
        return None
    if isinstance(store.source, FsSource):
        handle = open_file(store, obj, path)
        if handle is None:
            return None
        with handle:
            return handle.read() if limit is None else handle.read(limit)
    data = _git_read(store, f"{obj.rel}/{path}")
    return data if data is None or limit is None else data[:limit]


# (id of the source, rel) -> (the source itself, held so that its id is not reused, bytes)
_RECENT: OrderedDict[tuple[int, str], tuple[object, bytes | None]] = OrderedDict()
_RECENT_SIZE = 16


def _git_read(store: Store, rel: str) -> bytes | None:
    """A file at a revision. Each read starts a git process, and a page reads one file
    several times (kind, preview, copy), so the last few are kept."""
    key = (id(store.source), rel)
    if key in _RECENT:
        _RECENT.move_to_end(key)
        return _RECENT[key][1]
    try:
        data: bytes | None = store.source.read(rel)
    except (OSError, SourceError):
        data = None
    _RECENT[key] = (store.source, data)
    while len(_RECENT) > _RECENT_SIZE:
        _RECENT.popitem(last=False)
    return data


def open_any(store: Store, obj: Obj[Any], path: str) -> IO[bytes] | None:
    """A file of `obj` to read from: the working-tree file, or its bytes at a revision."""
    if isinstance(store.source, FsSource):
        return open_file(store, obj, path)
    data = read_bytes(store, obj, path)
    return None if data is None else io.BytesIO(data)


def over_limit(limit: int) -> str:
    """Why a file of a Run is not in the site."""
    from smevals.run.bounds import SIZE_SETTING

    return (f"not copied into the site: it takes the Run's files past the "
            f"{limit / (1 << 20):g} MB a Run may keep ({SIZE_SETTING} raises it)")


def decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")
