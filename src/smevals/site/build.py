"""`smevals build`: a self-contained static site, for file:// and any static host.

```
<out>/index.html  app.js  app.css              the app (the same files `serve` sends)
<out>/data/index.js                            every Eval of the site
<out>/data/<eval>/index.js                     leaderboard, grid, tag facets
<out>/data/<eval>/tags/<tag>.js                the same for the Runs tagged <tag>
<out>/data/<eval>/explore.js                   one line per Run, for filters and search
<out>/data/<eval>/search.js                    the search's index of every whole output
<out>/data/<eval>/tasks/<task>.js              one Task: the Runs of every model
<out>/data/<eval>/runs/<run id>.js             one Run: output, artifacts, Checks, Grades
<out>/data/<eval>/diff.js                      with --diff A B
<out>/data/<eval>/history.js                   with --history N: the History page
<out>/data/<eval>/diffs/<sha>.js               with --history N: each commit vs its parent
<out>/data/<eval>/pictures.js                  the grid's thumbnails (when there are pictures)
<out>/files/<eval>/<sha256>/<name>           the objects' files, once per content
```

Each Eval is written into a staging folder inside <out> and then swapped in, so building
one Eval into an existing site refreshes it and leaves the others as they were.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, cast

from smevals.errors import SmevalsError
from smevals.site import artifacts, jsdata
from smevals.site.data import (
    Loaded,
    eval_index,
    eval_summary,
    has_pictures,
    site_index,
    tag_view,
    tags_of,
)
from smevals.site.explore import explore_page
from smevals.site.gallery import pictures_page
from smevals.site.pagedata import EvalSummary
from smevals.site.pages import run_page, task_page
from smevals.site.search import Index
from smevals.store.read import Obj

ASSETS = ("index.html", "app.js", "app.css", "explore.js", "timeline.js", "history.js",
          "history.css")
CHUNK = 1 << 20
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def asset(name: str) -> bytes:
    return (resources.files("smevals.site") / "static" / name).read_bytes()


class StaticLinker:
    """Copies each linked file into the site, once per content: `files/<eval>/<sha256 in
    two parts>/<safe name>` (see artifacts.static_name). What it copies of one Run (its
    files and its Grades') stays within the size a Run may keep (SMEVALS_MAX_RUN_MB,
    run/bounds.py): a file past it is not copied, and its entry says why."""

    def __init__(self, loaded: Loaded, staging: Path):
        from smevals.run.bounds import limits

        self.loaded = loaded
        self.staging = staging
        self.incoming = staging / ".incoming"
        self.limit = limits().size
        self.spent: dict[str, int] = {}             # bytes copied, by Run
        self.linked: dict[tuple[str, str, str], dict[str, str]] = {}

    def _copy(self, obj: Obj[Any], path: str, most: int) -> tuple[str | None, int]:
        """Copy the file to `incoming`, at most `most` bytes: (its sha256, its size); (None,
        0) when it cannot be read, (None, -1) when it holds more than `most` bytes (nothing
        is left of it)."""
        source = artifacts.open_any(self.loaded.store, obj, path)
        if source is None:
            return None, 0
        self.staging.mkdir(parents=True, exist_ok=True)
        digest, size = hashlib.sha256(), 0
        with source, open(self.incoming, "wb") as out:
            while chunk := source.read(min(CHUNK, most - size + 1)):
                size += len(chunk)
                if size > most:
                    break
                digest.update(chunk)
                out.write(chunk)
        if size > most:
            self.incoming.unlink()
            return None, -1
        return digest.hexdigest(), size

    def link(self, obj: Obj[Any], path: str, kind: str) -> dict[str, str]:
        key = (obj.rel, path, kind)
        if key not in self.linked:
            self.linked[key] = self._link(obj, path, kind)
        return self.linked[key]

    def _link(self, obj: Obj[Any], path: str, kind: str) -> dict[str, str]:
        run = _run_of(obj)
        spent = self.spent.get(run, 0)
        digest, size = self._copy(obj, path, self.limit - spent)
        if digest is None:
            return {} if size == 0 else {"not_shown": artifacts.over_limit(self.limit)}
        self.spent[run] = spent + size
        href = self._place(digest, artifacts.static_name(path, kind))
        out = {"href": href, "download": artifacts.basename(path)}
        if kind == "image":
            out["src"] = href
        return out

    def picture(self, obj: Obj[Any], path: str, sanitised: bytes) -> str:
        """The sanitised copy of an SVG, stored as `<name>.svg` (it runs nothing)."""
        self.staging.mkdir(parents=True, exist_ok=True)
        self.incoming.write_bytes(sanitised)
        return self._place(hashlib.sha256(sanitised).hexdigest(),
                           artifacts.static_name(path, "picture"))

    def _place(self, digest: str, name: str) -> str:
        """Move `incoming` to its place by content (or drop it: that content is there)."""
        rel = f"{digest[:2]}/{digest[2:16]}/{name}"
        target = self.staging / rel
        if target.exists():
            self.incoming.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            self.incoming.rename(target)
        return f"files/{self.loaded.slug}/{rel}"


def _run_of(obj: Obj[Any]) -> str:
    """The Run a file belongs to: the object's own folder, or its Grade's Run."""
    run = obj.record.get("run") if obj.kind == "grade" else None
    return str(run.get("rel")) if isinstance(run, dict) else obj.rel


def check_target(out: Path) -> None:
    """Refuse to write into a folder that holds something other than a smevals site."""
    if not out.exists():
        return
    if not out.is_dir():
        raise SmevalsError(f"-o {out}: not a folder")
    if any(out.iterdir()) and not (out / "data" / "index.js").is_file():
        raise SmevalsError(f"-o {out}: the folder is not empty and holds no smevals site; "
                           "choose an empty or new folder")


def build_site(evals: list[Loaded], out: Path, generated: str) -> list[str]:
    """Write (or refresh) `evals` in the site at `out`; the lines to print."""
    check_target(out)
    out.mkdir(parents=True, exist_ok=True)
    for name in ASSETS:
        (out / name).write_bytes(asset(name))
    lines = []
    for loaded in evals:
        count = write_eval(loaded, out)
        lines.append(f"{loaded.slug}: {count} run(s) -> {out / 'data' / loaded.slug}")
    write_index(out, [eval_summary(e) for e in evals], generated)
    lines.append(f"Site: {out / 'index.html'}")
    return lines


def write_eval(loaded: Loaded, out: Path) -> int:
    with tempfile.TemporaryDirectory(prefix=".build-", dir=out) as tmp:
        data, files = Path(tmp) / "data", Path(tmp) / "files"
        count = write_data(loaded, data, StaticLinker(loaded, files))
        files.mkdir(exist_ok=True)
        (files / ".incoming").unlink(missing_ok=True)
        for part, staged in (("data", data), ("files", files)):
            target = out / part / loaded.slug
            target.parent.mkdir(exist_ok=True)
            if target.exists():
                shutil.rmtree(target)
            staged.rename(target)
    return count


def write_data(loaded: Loaded, folder: Path, linker: StaticLinker) -> int:
    slug = loaded.slug
    index = eval_index(loaded)
    _write(folder, f"{slug}/index", "index.js", index)
    words = Index()
    _write(folder, f"{slug}/explore", "explore.js", explore_page(loaded, index["grid"], words))
    _write(folder, f"{slug}/search", "search.js", words.doc(slug))
    for tag in tags_of(loaded):
        doc = tag_view(loaded, tag)
        _write(folder, f"{slug}/tags/{doc['slug']}", f"tags/{doc['slug']}.js", doc)
    for task, task_slug in loaded.task_slugs.items():
        _write(folder, f"{slug}/tasks/{task_slug}", f"tasks/{task_slug}.js",
               task_page(loaded, task))
    count = 0
    for run in loaded.runs:
        if SAFE_ID.match(run.id):
            _write(folder, f"{slug}/runs/{run.id}", f"runs/{run.id}.js",
                   run_page(loaded, run, linker))
            count += 1
    if loaded.diff is not None:
        _write(folder, f"{slug}/diff", "diff.js", loaded.diff)
    if loaded.history_doc is not None:
        _write(folder, f"{slug}/history", "history.js", loaded.history_doc)
    for sha, diff_doc in loaded.diffs.items():
        _write(folder, f"{slug}/diffs/{sha}", f"diffs/{sha}.js", diff_doc)
    if has_pictures(loaded):
        _write(folder, f"{slug}/pictures", "pictures.js", pictures_page(loaded, linker))
    return count


def _write(folder: Path, key: str, rel: str, doc: object) -> None:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(jsdata.encode(key, doc))


def write_index(out: Path, summaries: list[EvalSummary], generated: str) -> None:
    """Merge `summaries` into the site's index: other Evals' entries are kept."""
    path = out / "data" / "index.js"
    kept: list[dict[str, Any]] = []
    try:
        _key, old = jsdata.decode(path.read_bytes())
        kept = [e for e in old.get("evals", []) if isinstance(e, dict)]
    except (OSError, ValueError, AttributeError):
        pass
    mine = {s["slug"] for s in summaries}
    kept = [e for e in kept if e.get("slug") not in mine and SAFE_ID.match(str(e.get("slug")))
            and (out / "data" / str(e.get("slug"))).is_dir()]
    path.parent.mkdir(exist_ok=True)
    earlier = cast(list[EvalSummary], kept)     # as an earlier build wrote them
    path.write_bytes(jsdata.encode("index", site_index(earlier + summaries, generated, False)))
