"""`smevals build` and `smevals serve`: read each Eval as `smevals report` does (the same
rows, the same Grade that counts), then write the static site or serve it live."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import orjson

from smevals.diff import pairs
from smevals.errors import SmevalsError
from smevals.report.document import generated_at
from smevals.sides.read import SideSpec, load_side
from smevals.site.build import build_site
from smevals.site.data import Loaded
from smevals.site.history import (
    DEFAULT_COMMITS,
    HistorySpec,
    LiveHistory,
    check_count,
    commit_diffs,
    diff_page,
    eval_history,
    history_page,
    repo_head,
)
from smevals.site.live import MIN_INTERVAL, Live
from smevals.site.serve import LOOPBACK_NAMES, POLL_SECONDS, SiteServer
from smevals.spec.discover import find_evals
from smevals.store.index import gc_paused
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


def make_server(opts: SiteOptions, host: str, port: int, poll_seconds: float = POLL_SECONDS,
                check_every: float = MIN_INTERVAL) -> SiteServer:
    """A server of the Evals under `opts.paths` (not yet serving): pages poll for changes
    every `poll_seconds`; the stores are looked at no more often than `check_every`."""
    folders = find_evals(list(opts.paths))
    # serve reads the working tree only (no --rev), so no temporary files are made
    tmp = Path(tempfile.gettempdir())
    live = Live([(folder, partial(load_one, folder, opts, tmp)) for folder in folders],
                check_every, live_history(opts, folders))
    check_slugs(live.evals(), folders)
    try:
        return SiteServer(live, host, port, poll_seconds)
    except OSError as exc:
        raise SmevalsError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def live_history(opts: SiteOptions,
                 folders: list[Path]) -> Callable[[Path], LiveHistory | None] | None:
    """The History pages of `serve`: by default the last 20 commits, for the Evals in a git
    repository; `--history N` asks for N (exit 2 outside a repository), 0 for none."""
    if opts.history == 0:
        return None
    n = DEFAULT_COMMITS if opts.history is None else opts.history
    check_count(n)
    if opts.history is not None:
        for folder in folders:
            repo_head(folder)
    spec = HistorySpec(n, opts.grader, opts.store, opts.task_pass)

    def make(folder: Path) -> LiveHistory | None:
        history = LiveHistory(folder, spec)
        return history if history.head is not None else None

    return make


def serve_command(opts: SiteOptions, host: str, port: int,
                  announce: Callable[[str], None]) -> None:
    """Serve until interrupted (Ctrl-C ends it normally)."""
    if opts.rev:
        raise SmevalsError("serve shows the working tree; use `smevals build --rev` instead")
    server = make_server(opts, host, port)
    count = len(server.live.entries)
    announce(f"Serving {count} eval(s) on {server.url} (Ctrl-C to stop)")
    if host.strip("[]") not in LOOPBACK_NAMES:
        announce(f"Warning: {host} is not a loopback address; anyone who can reach it can read "
                 "every Run, including untrusted model output")
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:        # Ctrl-C or SIGTERM is how `serve` ends: exit 0
        from smevals.proc.signals import forget

        forget()
    finally:
        server.server_close()
