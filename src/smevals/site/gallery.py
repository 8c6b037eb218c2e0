"""Pictures in the site: how one file of a Run or Grade is shown as a picture (Run page),
and the thumbnails of the task x model grid (`data/<eval>/pictures.js`).

A raster file is shown when its bytes are a picture within the pixel limit
(`site.pictures`); an SVG only as its sanitised copy (`checkers.xmlsafe`). Anything else that
bears a picture's name says why it is not shown.
"""

from __future__ import annotations

from typing import Any, Protocol

from smevals.checkers import xmlsafe
from smevals.report.rows import cell_of
from smevals.site import artifacts, pictures
from smevals.site.data import FORMAT, Loaded
from smevals.site.picturefiles import picture_entries
from smevals.store.read import AnyObj, Obj
from smevals.store.records import FileEntry

THUMBS_PER_CELL = 4               # pictures shown in one grid cell (one per Run)


class Linker(Protocol):
    def link(self, obj: Obj[Any], path: str, kind: str) -> dict[str, str]:
        """`href` (and `src` for an image, `download` for a binary) of one file."""
        ...

    def picture(self, obj: Obj[Any], path: str, sanitised: bytes) -> str:
        """The `src` of the sanitised copy of an SVG file of `obj`."""
        ...


def picture_json(loaded: Loaded, obj: AnyObj, entry: FileEntry, kind: str,
                 head: bytes | None, linker: Linker) -> dict[str, Any]:
    """What a Run page adds to a file that bears a picture's name: the `src` of the SVG's
    sanitised copy, the picture's size, or `not_shown` and why."""
    path = entry["path"]
    if kind == "svg":
        data = artifacts.read_bytes(loaded.store, obj, path, xmlsafe.MAX_BYTES + 1)
        try:
            clean = xmlsafe.sanitise(data or b"")
        except xmlsafe.Refused as exc:
            return {"not_shown": f"not shown: {exc}"}
        return {"src": linker.picture(obj, path, clean)}
    picture = artifacts.picture_of(entry, head)
    if picture is None:
        return {}
    if picture.shown:
        return {"width": picture.width, "height": picture.height}
    return {"not_shown": f"not shown: {picture.refused}"}


def read_head(loaded: Loaded, obj: AnyObj, path: str, size: int) -> bytes | None:
    """The first bytes of a file, enough to tell its kind (and an image's size)."""
    if artifacts.extension(path) in pictures.EXTENSIONS:
        size = max(size, artifacts.HEAD)
    return artifacts.read_bytes(loaded.store, obj, path, size)


# --- the grid's thumbnails ---------------------------------------------------------------


def first_picture(loaded: Loaded, objs: list[AnyObj], linker: Linker) -> dict[str, Any] | None:
    """The picture a Run is shown by: the first one the Grade that counts made, else the
    first the runner left; raster files before SVGs, each in recorded order."""
    for obj in objs:
        entries = picture_entries(obj)
        ordered = [e for e in entries if artifacts.extension(e["path"]) != "svg"] + \
                  [e for e in entries if artifacts.extension(e["path"]) == "svg"]
        for entry in ordered:
            head = read_head(loaded, obj, entry["path"], artifacts.SNIFF)
            kind = artifacts.kind_of(entry, head)
            if kind not in ("image", "svg"):
                continue
            shown = picture_json(loaded, obj, entry, kind, head, linker)
            if kind == "image":
                shown.update(linker.link(obj, entry["path"], kind))
            if shown.get("src"):
                return {"path": entry["path"], "src": shown["src"],
                        "width": shown.get("width"), "height": shown.get("height")}
    return None


def pictures_page(loaded: Loaded, linker: Linker) -> dict[str, Any]:
    """`data/<eval>/pictures.js`: per task x config x model, the pictures of its first
    THUMBS_PER_CELL Runs that have one (counted Runs first, then by sample)."""

    rows = {row.run.rel: row for row in loaded.report.collected.rows}
    cells: dict[tuple[str, str, str], list[Obj[Any]]] = {}
    for run in loaded.runs:
        cells.setdefault(cell_of(run), []).append(run)
    out = []
    for (task, config, model), runs in sorted(cells.items()):
        runs.sort(key=lambda r: (r.rel not in rows, _sample(r), r.id))
        thumbs = []
        for run in runs:
            row = rows.get(run.rel)
            grade = loaded.grades_by_id.get(row.grade.id) if row else None
            picture = first_picture(loaded, [g for g in (grade, run) if g is not None], linker)
            if picture is not None:
                thumbs.append({**picture, "run": run.id, "status": loaded.status(run),
                               "tags": row.tags if row else []})
            if len(thumbs) == THUMBS_PER_CELL:
                break
        if thumbs:
            out.append({"task": task, "config": config, "model": model, "pictures": thumbs})
    return {"format": FORMAT, "kind": "pictures", "eval": loaded.slug, "cells": out}


def _sample(run: Obj[Any]) -> int:
    sample = run.record.get("sample")
    return sample if isinstance(sample, int) else 0
