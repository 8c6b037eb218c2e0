"""Which files of a Run or Grade are named like a picture: what the Eval page (data.py)
and the thumbnails and Run pages (gallery.py) both ask."""

from __future__ import annotations

from smevals.site import artifacts, pictures
from smevals.store.read import AnyObj
from smevals.store.records import FileEntry

PICTURE_EXTENSIONS = (*pictures.EXTENSIONS, "svg")


def named_like_picture(path: str) -> bool:
    return artifacts.extension(path) in PICTURE_EXTENSIONS


def picture_entries(obj: AnyObj | None) -> list[FileEntry]:
    """The files of `obj` named like a picture that may be shown (no link, no special
    file, a safe path)."""
    files = obj.record.get("files") if obj is not None else None
    return [e for e in files if isinstance(e, dict) and isinstance(e.get("path"), str)
            and "symlink" not in e and not e.get("special") and artifacts.safe_inner(e["path"])
            and named_like_picture(e["path"])] if isinstance(files, list) else []
