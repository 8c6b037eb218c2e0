"""`smevals serve` (cli/serve_cmd.py): each Eval read as `smevals report` reads it
(site/load.py), served live: Runs and Grades that land while it is open appear."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.evaldef.discover import find_evals
from smevals.site.history import (
    DEFAULT_COMMITS,
    HistorySpec,
    LiveHistory,
    check_count,
    repo_head,
)
from smevals.site.live import MIN_INTERVAL, Live
from smevals.site.load import SiteOptions, check_slugs, load_one
from smevals.site.serve import LOOPBACK_NAMES, POLL_SECONDS, SiteServer


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
