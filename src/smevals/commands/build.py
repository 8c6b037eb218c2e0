"""`smevals build` (cli/build_cmd.py): each Eval read as `smevals report` reads it
(site/load.py), with its diff and History pages on request, written as a static site."""

from __future__ import annotations

from pathlib import Path

import orjson

from smevals.diff import pairs
from smevals.errors import SmevalsError
from smevals.evaldef.discover import find_evals
from smevals.report.document import generated_at
from smevals.sides.read import SideSpec
from smevals.site.build import build_site
from smevals.site.data import Loaded
from smevals.site.history import (
    HistorySpec,
    check_count,
    commit_diffs,
    diff_page,
    eval_history,
    history_page,
    repo_head,
)
from smevals.site.load import SiteOptions, load_all
from smevals.store.index import gc_paused


def build_command(opts: SiteOptions, out: str, diff: tuple[str, str] | None = None) -> list[str]:
    """Write the site; the lines to print."""
    with gc_paused():
        if opts.history is not None:
            check_history(opts, opts.history)
        evals = load_all(opts)
        if diff is not None:
            attach_diff(evals, opts, diff)
        if opts.history is not None:
            attach_history(evals, opts, opts.history)
        return build_site(evals, Path(out), generated_at())


def check_history(opts: SiteOptions, n: int) -> None:
    """Exit 2 before anything is read for a bad --history: a count out of range, with --rev,
    or an Eval outside a git repository."""
    check_count(n)
    if opts.rev:
        raise SmevalsError("--history reads the commits up to HEAD; it cannot go with --rev")
    for folder in find_evals(list(opts.paths)):
        repo_head(folder)


def attach_history(evals: list[Loaded], opts: SiteOptions, n: int) -> None:
    """Each Eval's History page over the last `n` commits, and the diff page of each listed
    commit against its parent."""
    folders = find_evals(list(opts.paths))
    spec = HistorySpec(n, opts.grader, opts.store, opts.task_pass)
    for loaded, folder in zip(evals, folders, strict=True):
        doc = eval_history(folder, spec)
        loaded.diffs = commit_diffs(loaded.slug, folder, spec, doc)
        loaded.history_doc = history_page(loaded.slug, loaded.ev.name, doc, set(loaded.diffs))


def attach_diff(evals: list[Loaded], opts: SiteOptions, revs: tuple[str, str]) -> None:
    """The data of `smevals diff A B --format json` for each Eval, for its diff page."""
    folders = [str(f) for f in find_evals(list(opts.paths))]
    for rev in revs:
        if Path(rev).is_dir():
            raise SmevalsError(f"--diff: '{rev}' is a folder, not a git revision")
    spec = SideSpec(opts.grader, None, opts.store)
    diff_opts = pairs.DiffOptions((*revs, *folders), spec, fmt="json", task_pass=opts.task_pass)
    result = pairs.diff(diff_opts, *pairs.split_args(diff_opts.args))
    doc = orjson.loads(result.text)
    by_name = {entry.get("eval"): entry for entry in doc.get("evals", [])}
    for loaded in evals:
        entry = by_name.get(loaded.ev.name)
        if entry is not None:
            loaded.diff = diff_page(loaded.slug, doc, entry)
