"""Fixtures of the web report tests: the sites under test and a headless Chromium.

Chromium is Debian's `chromium` (SMEVALS_CHROMIUM, else `chromium` or `chromium-browser` on
PATH, else /usr/bin/chromium), driven by Playwright for Python; Playwright's own browser
download is never used. When Chromium or Playwright is missing, the tests that need the
browser skip with one reason, so `python -m pytest` passes on a fresh machine; with
SMEVALS_REQUIRE_BROWSER=1 (set by .ci/run) they fail instead. Screenshots of every page
visited go to tests/site/artifacts/ (or SMEVALS_WEB_ARTIFACTS).
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from smevals.commands.serve import make_server
from smevals.site.load import SiteOptions
from smevals.site.serve import SiteServer
from tests.helpers import run_cli
from tests.helpers.qa import history
from tests.helpers.web.hostile import MODEL, make_hostile

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(os.environ.get("SMEVALS_WEB_ARTIFACTS",
                                Path(__file__).resolve().parents[2] / "site" / "artifacts"))
EPOCH = "1767322800"
# Read once, at collection: tests/conftest.py removes them from every test's environment (a
# runner must not see them), and the subprocesses of tests/site/test_fresh_machine.py set
# their own.
GIVEN_CHROMIUM = os.environ.get("SMEVALS_CHROMIUM")
REQUIRE_BROWSER = os.environ.get("SMEVALS_REQUIRE_BROWSER") == "1"


@dataclass
class Sites:
    root: Path
    repo: Path              # git history of the qa Eval (tests/helpers/qa.py)
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


def find_chromium() -> str | None:
    """SMEVALS_CHROMIUM when set (even to a path that does not exist: then there is none),
    else `chromium` or `chromium-browser` on PATH, else Debian's /usr/bin/chromium."""
    found = [GIVEN_CHROMIUM] if GIVEN_CHROMIUM is not None else [
        shutil.which("chromium"), shutil.which("chromium-browser"), "/usr/bin/chromium"]
    return next((p for p in found if p and os.path.isfile(p) and os.access(p, os.X_OK)), None)


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if find_chromium() is None:
        where = GIVEN_CHROMIUM or "PATH or /usr/bin/chromium"
        return (f"no Chromium found ({where}): `apt-get install chromium` or set "
                "SMEVALS_CHROMIUM to run the browser tests")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is missing: pip install -e '.[dev]'"
    return None


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip every test that needs the browser, before any of its fixtures is set up, with
    one reason; with SMEVALS_REQUIRE_BROWSER=1 they run, and the `browser` fixture fails."""
    if REQUIRE_BROWSER:
        return
    if "browser" in getattr(item, "fixturenames", ()) and (reason := missing_browser()):
        pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    reason = missing_browser()
    if reason is not None:
        pytest.fail(f"SMEVALS_REQUIRE_BROWSER=1, but {reason}", pytrace=False)
    chromium = find_chromium()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
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


@pytest.fixture(scope="session")
def browser_context(browser: Any) -> Iterator[Any]:
    """One context per test process: a page opened in it costs Chromium about 0.12 s less
    CPU than a page in a context of its own (docs/performance.md). Sharing it is safe
    because the web report keeps nothing in the browser (no storage, no cookies, and `serve`
    answers with no-store), and each test's pages are closed when it ends."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield context
    context.close()


@pytest.fixture
def open_page(browser_context: Any) -> Iterator[Any]:
    pages = []

    def opener(base: str) -> Watched:
        page = browser_context.new_page()
        pages.append(page)
        page.set_default_timeout(5000)
        watched = Watched(page, base.rsplit("/", 1)[0] if base.startswith("file:") else base)
        page.on("console", lambda m: watched.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: watched.errors.append(str(e)))
        def dismiss(dialog: Any) -> None:
            watched.dialogs.append(dialog.message)
            dialog.dismiss()

        page.on("dialog", dismiss)
        page.on("request", watched.on_request)
        return watched

    yield opener
    for page in pages:
        page.close()
    browser_context.clear_cookies()
