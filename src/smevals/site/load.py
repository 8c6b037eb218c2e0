"""What `smevals build` and `smevals serve` share: their options, and each Eval read as
`smevals report` reads it (the same rows, the same Grade that counts)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.evaldef.discover import find_evals
from smevals.report.document import generated_at
from smevals.sides.read import SideSpec, load_side
from smevals.site.data import Loaded
from smevals.store.layout import slug


@dataclass(frozen=True)
class SiteOptions:
    paths: tuple[str, ...]
    grader: str = "default"
    store: str | None = None
    rev: str | None = None
    task_pass: str = "majority"     # the diff page's rule of a task's verdict (--task-pass)
    history: int | None = None      # commits of the History page (None: build none, serve 20)


def load_one(folder: Path, opts: SiteOptions, tmp: Path) -> Loaded:
    side = load_side(folder, SideSpec(opts.grader, opts.rev, opts.store, full_records=True),
                     tmp)
    assert side.ev is not None and side.store is not None    # load_side: always present
    return Loaded(slug(side.ev.name), side.ev, side.store, side.report, generated_at())


def check_slugs(evals: list[Loaded], folders: list[Path]) -> None:
    seen: dict[str, Path] = {}
    for loaded, folder in zip(evals, folders, strict=True):
        if loaded.slug.endswith(".js"):
            raise SmevalsError(f"{folder}: an Eval named '{loaded.ev.name}' would clash with the "
                               "site's own files; rename it in eval.yaml")
        other = seen.setdefault(loaded.slug, folder)
        if other != folder:
            raise SmevalsError(f"two Evals would share the URL '{loaded.slug}': {other} and "
                               f"{folder} (give them different names in eval.yaml)")


def load_all(opts: SiteOptions) -> list[Loaded]:
    folders = find_evals(list(opts.paths))
    with tempfile.TemporaryDirectory(prefix="smevals-site-") as tmp:
        evals = [load_one(folder, opts, Path(tmp)) for folder in folders]
    check_slugs(evals, folders)
    return evals
