"""Fixtures of the web report tests: the sites under test and a headless Chromium.

Chromium is Debian's `chromium` (/usr/bin/chromium, or SMEVALS_CHROMIUM), driven by
Playwright for Python; Playwright's own browser download is never used. When Chromium or
Playwright is missing the browser tests fail, they do not skip. Screenshots of every page
visited go to tests/web/artifacts/ (or SMEVALS_WEB_ARTIFACTS).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from smevals.commands.site import SiteOptions, make_server
from smevals.site.serve import SiteServer
from tests.conftest import run_cli
from tests.report.builder import history
from tests.web.hostile import MODEL, make_hostile

CHROMIUM = os.environ.get("SMEVALS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(os.environ.get("SMEVALS_WEB_ARTIFACTS", Path(__file__).parent / "artifacts"))
EPOCH = "1767322800"


@dataclass
class Sites:
    root: Path
    repo: Path              # git history of the qa Eval (tests/report/builder.py)
    qa: Path
    hostile: Path
    site: Path              # both Evals built into one static site, qa with a diff page
    env: dict[str, str]

    @property
    def index(self) -> str:
        return (self.site / "index.html").as_uri()


@pytest.fixture(scope="session")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Sites:
    root = tmp_path_factory.mktemp("web")
    env = {"SMEVALS_CACHE_DIR": str(root / "cache"), "SOURCE_DATE_EPOCH": EPOCH}
    repo = root / "repo"
    repo.mkdir()
    history(repo)
    hostile = make_hostile(root / "hostile")
    made = run_cli("run", str(hostile), "-m", MODEL, "-g", env=env)
    assert made.code == 0, made.both
    site = root / "site"
    for args in (["--diff", "HEAD~2", "HEAD~1", str(repo / "qa")], [str(hostile)]):
        built = run_cli("build", "-o", str(site), *args, cwd=repo, env=env)
        assert built.code == 0, built.both
    return Sites(root, repo, repo / "qa", hostile, site, env)


def start(server: SiteServer) -> SiteServer:
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    return server


@pytest.fixture(scope="session")
def served(sites: Sites) -> Iterator[SiteServer]:
    """`smevals serve` of the same two Evals, in this process, on a free port."""
    server = start(make_server(SiteOptions((str(sites.qa), str(sites.hostile))), "127.0.0.1", 0))
    yield server
    server.shutdown()
    server.server_close()


# --- the browser -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"Chromium not found at {CHROMIUM}: `apt-get install chromium` "
                    "(or set SMEVALS_CHROMIUM)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright for Python is missing: pip install -e '.[dev]'")
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Watched:
    """A page with everything that went wrong on it: console errors, page errors,
    dialogs (alert() from injected script) and requests that left the site."""

    page: Any
    base: str
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)

    def on_request(self, request: Any) -> None:
        url = request.url
        if not (url.startswith(self.base) or url.startswith("data:")):
            self.foreign.append(url)

    def shot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def clean(self) -> None:
        assert self.errors == []
        assert self.dialogs == []
        assert self.foreign == []
        assert self.page.evaluate("typeof window.PWNED") == "undefined"


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    contexts = []

    def opener(base: str) -> Watched:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(5000)
        watched = Watched(page, base.rsplit("/", 1)[0] if base.startswith("file:") else base)
        page.on("console", lambda m: watched.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: watched.errors.append(str(e)))
        page.on("dialog", lambda d: (watched.dialogs.append(d.message), d.dismiss()))
        page.on("request", watched.on_request)
        return watched

    yield opener
    for context in contexts:
        context.close()
