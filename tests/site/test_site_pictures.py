"""Pictures in the web report, in headless Chromium: a runner leaves a PNG, SVGs with
script and with references to a server of ours, a decompression bomb, a page named
`.png` and a symlink to a PNG; a checker adds a PNG to the Grade. The Run page and the
grid's thumbnails show the pictures (decoded: naturalWidth > 0), run no script, ask the
server for nothing, hand the bomb to no browser and follow no link."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from smevals.commands.serve import make_server
from smevals.site import jsdata
from smevals.site.load import SiteOptions
from smevals.site.serve import SiteServer
from tests.helpers import make_eval, run_cli
from tests.helpers.web.pages import fetch, wait_until
from tests.helpers.web.site import EPOCH, Sites, Watched, start
from tools.imagefiles import bomb_png, png

RUNNER = """#!/bin/sh
printf 'drew a %s\\n' "$SMEVALS_TASK"
pics="$SMEVALS_EVAL_DIR/pics"
if [ -f "$pics/$SMEVALS_MODEL.png" ]; then cp "$pics/$SMEVALS_MODEL.png" drawing.png; fi
cp "$pics/bomb.png" bomb.png
printf '<html><script>window.PWNED = "fake"</script></html>\\n' > fake.png
ln -s "$pics/render.png" link.png
cat > evil.svg <<'EOF'
<svg xmlns="http://www.w3.org/2000/svg" width="60" height="60"
     onload="window.PWNED='svg';alert('svg')">
<script>window.PWNED = 'svg-script'; alert('svg-script')</script>
<rect width="60" height="60" fill="tomato"/></svg>
EOF
cat > remote.svg <<'EOF'
@REMOTE@
EOF
"""

REMOTE = """<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
     width="80" height="80">
<style>@import url(http://127.0.0.1:{port}/import.css);</style>
<image href="http://127.0.0.1:{port}/image.png" width="80" height="80"/>
<image xlink:href="http://127.0.0.1:{port}/xlink.png" width="80" height="80"/>
<rect width="80" height="40" fill="url(http://127.0.0.1:{port}/paint.svg#p)"/>
<circle cx="40" cy="60" r="15" fill="gold"/></svg>"""

CHECKER = """#!/bin/sh
if [ "$SMEVALS_TASK" = pelican ]; then cp "$SMEVALS_EVAL_DIR/pics/render.png" render.png; fi
[ "$SMEVALS_MODEL" = m1 ] || { echo "m2 draws badly" >&2; exit 1; }
echo '{"score": 1}'
"""


class Counter(ThreadingHTTPServer):
    """A server on 127.0.0.1 that counts the requests it gets (and answers 404)."""

    daemon_threads = True

    def __init__(self) -> None:
        self.paths: list[str] = []
        counter = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                counter.paths.append(self.path)
                self.send_error(404)

            def log_message(self, *args: Any) -> None:
                return

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()


@dataclass
class Gallery:
    ev: Path
    site: Path
    counter: Counter
    served: SiteServer

    def run_id(self, task: str, model: str) -> str:
        for path in (self.site / "data" / "gallery" / "runs").glob("*.js"):
            doc = jsdata.decode(path.read_bytes())[1]
            if (doc["task"], doc["model"], doc["sample"]) == (task, model, 0):
                return str(doc["id"])
        raise AssertionError(f"no Run of {task} by {model}")


@pytest.fixture(scope="module")
def gallery(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gallery]:
    root = tmp_path_factory.mktemp("gallery")
    counter = Counter()
    remote = REMOTE.format(port=counter.server_address[1])
    ev = make_eval(root / "gallery", name="gallery",
                   tasks={"pelican": "prompt: Draw a pelican\n",
                          "walrus": "prompt: Draw a walrus\n"},
                   configs={"default": "runner: ./draw.sh\nmodel: m1\n"},
                   graders={"default": "checks:\n  - checker: ./render\n"},
                   files={"configs/draw.sh": RUNNER.replace("@REMOTE@", remote),
                          "graders/render": CHECKER})
    (ev / "pics").mkdir()
    (ev / "pics" / "m1.png").write_bytes(png(40, 30, (200, 40, 40)))
    (ev / "pics" / "render.png").write_bytes(png(24, 24, (30, 160, 90)))
    (ev / "pics" / "bomb.png").write_bytes(bomb_png())
    env = {"SMEVALS_CACHE_DIR": str(root / "cache"), "SOURCE_DATE_EPOCH": EPOCH}
    ran = run_cli("run", str(ev), "-m", "m1", "-m", "m2", "-n", "2", "-g", env=env)
    assert ran.code == 1, ran.both                  # the Grades of m2 fail
    built = run_cli("build", str(ev), "-o", str(root / "site"), env=env)
    assert built.code == 0, built.both
    served = start(make_server(SiteOptions((str(ev),)), "127.0.0.1", 0))
    yield Gallery(ev, root / "site", counter, served)
    for server in (served, counter):
        server.shutdown()
        server.server_close()


def base_of(gallery: Gallery, where: str) -> str:
    return (gallery.site / "index.html").as_uri() if where == "static" else gallery.served.url


def decoded(selector: str) -> str:
    return (f"[...document.querySelectorAll({selector!r})]"
            ".every((i) => i.complete && i.naturalWidth > 0)")


def file_box(page: Any, name: str) -> Any:
    return page.locator("#s-artifacts .file", has=page.locator(".filehead code",
                                                                has_text=name)).first


def check_run_page(w: Watched, gallery: Gallery) -> None:
    page = w.page
    page.wait_for_selector("#s-artifacts img.artifact")
    wait_until(page, decoded("#s-artifacts img.artifact"))
    shown = page.eval_on_selector_all(
        "#s-artifacts img.artifact", "els => els.map((i) => [i.alt, i.naturalWidth])")
    assert shown == [["drawing.png", 40], ["evil.svg", 60], ["remote.svg", 80]]
    assert "image · 100 B · 40 × 30" in file_box(page, "drawing.png").inner_text()
    bomb = file_box(page, "bomb.png")
    assert bomb.locator("img").count() == 0
    assert "Not shown: 20,000 × 20,000 pixels, over the limit of 25,000,000." in bomb.inner_text()
    fake = file_box(page, "fake.png")
    assert fake.locator("img").count() == 0
    assert "Not shown: its bytes are not those of a PNG" in fake.inner_text()
    assert '<html><script>window.PWNED = "fake"</script></html>' in fake.locator("pre").inner_text()
    link = file_box(page, "link.png")
    assert link.locator("img").count() == 0
    assert f"symlink → {gallery.ev / 'pics' / 'render.png'} (not followed)" in link.inner_text()
    assert page.locator("main svg image, main svg script").count() == 0   # nothing inlined
    page.wait_for_timeout(300)
    w.clean()


@pytest.mark.parametrize("where", ["static", "served"])
def test_the_run_page_shows_pictures_and_runs_nothing(where: str, gallery: Gallery,
                                                      open_page) -> None:
    base = base_of(gallery, where)
    w = open_page(base)
    w.page.goto(f"{base}#/gallery/run/{gallery.run_id('walrus', 'm1')}")
    check_run_page(w, gallery)
    w.shot(f"{where}-pictures-run")
    w.page.goto(f"{base}#/gallery/run/{gallery.run_id('pelican', 'm1')}")
    w.page.wait_for_selector("#s-artifacts h3.sub")
    wait_until(w.page, decoded("#s-artifacts img.artifact"))
    made = w.page.locator("#s-artifacts .files").nth(1).locator("img.artifact")
    assert made.evaluate_all("els => els.map((i) => [i.alt, i.naturalWidth])") == \
        [["render.png", 24]]
    # the sanitised copies, opened on their own, run nothing and ask for nothing either
    srcs = w.page.eval_on_selector_all("#s-artifacts img.artifact",
                                       "els => els.map((i) => i.src)")
    for src in [s for s in srcs if ".svg" in s]:
        w.page.goto(src)
        w.page.wait_for_timeout(200)
        assert w.page.evaluate("typeof window.PWNED") == "undefined", src
    assert gallery.counter.paths == []
    w.clean()


@pytest.mark.parametrize("where", ["static", "served"])
def test_the_grid_shows_thumbnails(where: str, gallery: Gallery, open_page) -> None:
    base = base_of(gallery, where)
    w = open_page(base)
    w.page.goto(f"{base}#/gallery")
    w.page.wait_for_selector("table.grid")
    assert w.page.locator("table.grid .thumb").count() == 0
    w.page.get_by_role("link", name="Show pictures").click()
    w.page.wait_for_selector("table.grid .thumb img")
    assert w.page.url.endswith("#/gallery/pictures")
    wait_until(w.page, decoded("table.grid .thumb img"))
    cells = w.page.locator("table.grid tbody td")
    shown = [cells.nth(i).locator("img").evaluate_all("els => els.map((i) => i.alt)")
             for i in range(4)]
    # pelican: the PNG the Grade made; walrus: the Run's PNG, else (m2) its first SVG
    assert shown == [["render.png"] * 2, ["render.png"] * 2, ["drawing.png"] * 2,
                     ["evil.svg"] * 2]
    assert w.page.locator("table.grid .thumb.t-pass").count() == 4
    assert w.page.locator("table.grid .thumb.t-fail").count() == 4
    w.shot(f"{where}-pictures-grid")
    w.page.locator("table.grid .thumb").first.click()
    w.page.wait_for_selector("#s-artifacts")
    assert "#/gallery/run/" in w.page.url
    w.page.go_back()
    w.page.get_by_role("link", name="Hide pictures").click()
    w.page.wait_for_url(f"{base}#/gallery")
    wait_until(w.page, "document.querySelectorAll('table.grid .thumb').length === 0")
    assert gallery.counter.paths == []
    w.clean()


def test_the_external_references_are_live(open_page) -> None:
    """Control: the same SVG put into a page does ask a server of ours, so the tests above
    that see no request are not vacuous."""
    counter = Counter()
    try:
        w = open_page("about:")
        w.page.set_content(f"<html><body>{REMOTE.format(port=counter.server_address[1])}"
                           "</body></html>")
        wait_until(w.page, "true")
        for _ in range(50):
            if "/image.png" in counter.paths:
                break
            w.page.wait_for_timeout(100)
        assert "/image.png" in counter.paths
    finally:
        counter.shutdown()
        counter.server_close()


# --- the data and the files behind the pages (no browser needed) --------------------------


def data(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = jsdata.decode(path.read_bytes())[1]
    return out


def test_the_pictures_data(gallery: Gallery, sites: Sites) -> None:
    folder = gallery.site / "data" / "gallery"
    assert data(folder / "index.js")["pictures"] is True
    cells = data(folder / "pictures.js")["cells"]
    assert [(c["task"], c["model"], [p["path"] for p in c["pictures"]],
             [p["status"] for p in c["pictures"]]) for c in cells] == [
        ("pelican", "m1", ["render.png"] * 2, ["pass"] * 2),
        ("pelican", "m2", ["render.png"] * 2, ["fail"] * 2),
        ("walrus", "m1", ["drawing.png"] * 2, ["pass"] * 2),
        ("walrus", "m2", ["evil.svg"] * 2, ["fail"] * 2)]
    assert (cells[2]["pictures"][0]["width"], cells[2]["pictures"][0]["height"]) == (40, 30)
    # an Eval with no file named like a picture offers no thumbnails
    assert data(sites.site / "data" / "qa" / "index.js")["pictures"] is False
    assert not (sites.site / "data" / "qa" / "pictures.js").exists()


def test_the_run_data_says_what_is_shown(gallery: Gallery) -> None:
    run = data(gallery.site / "data" / "gallery" / "runs" /
               f"{gallery.run_id('walrus', 'm1')}.js")
    files = {f["path"]: f for f in run["files"]}
    assert [(p, f["kind"], "src" in f) for p, f in sorted(files.items())] == [
        ("bomb.png", "binary", False), ("drawing.png", "image", True),
        ("evil.svg", "svg", True), ("fake.png", "text", False), ("link.png", "link", False),
        ("output.txt", "text", False), ("remote.svg", "svg", True)]
    assert files["bomb.png"]["href"].endswith("/bomb.png.bin")
    assert files["fake.png"]["href"].endswith("/fake.png.txt")
    assert files["remote.svg"]["href"].endswith("/remote.svg.txt")
    copy = (gallery.site / files["remote.svg"]["src"]).read_text()
    assert copy == ('<svg xmlns="http://www.w3.org/2000/svg" width="80" height="80">\n\n\n\n'
                    '<rect width="80" height="40" fill="none"></rect>\n'
                    '<circle cx="40" cy="60" r="15" fill="gold"></circle></svg>')
    assert "127.0.0.1" in (gallery.site / files["remote.svg"]["href"]).read_text()


@pytest.mark.parametrize("name, kind, disposition", [
    ("drawing.png", "image/png", None),
    ("bomb.png", "application/octet-stream",
     "attachment; filename=\"bomb.png\"; filename*=UTF-8''bomb.png"),
    ("fake.png", "text/plain; charset=utf-8", None),
    ("remote.svg", "text/plain; charset=utf-8", None),
])
def test_serve_sends_pictures_by_their_bytes(gallery: Gallery, name: str, kind: str,
                                             disposition: str | None) -> None:
    run = gallery.run_id("walrus", "m1")
    status, headers, _body = fetch(gallery.served, f"/files/gallery/runs/{run}/{name}")
    assert (status, headers["content-type"]) == (200, kind)
    assert headers.get("content-disposition") == disposition
    status, headers, body = fetch(gallery.served, f"/pictures/gallery/runs/{run}/remote.svg")
    assert (status, headers["content-type"]) == (200, "image/svg+xml")
    assert b"127.0.0.1" not in body and b"<circle" in body
    for other in ("link.png", "drawing.png", "bomb.png"):
        assert fetch(gallery.served, f"/pictures/gallery/runs/{run}/{other}")[0] == 404
    served = jsdata.decode(fetch(gallery.served, "/data/gallery/pictures.js")[2])[1]
    assert [len(c["pictures"]) for c in served["cells"]] == [2, 2, 2, 2]
    assert served["cells"][3]["pictures"][0]["src"].startswith("pictures/gallery/")


def test_a_site_of_a_revision_shows_the_same_pictures(gallery: Gallery, tmp_path: Path) -> None:
    root = gallery.ev.parent
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    if not (root / ".git").exists():
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", "gallery"], check=True)
    built = run_cli("build", "--rev", "HEAD", str(gallery.ev), "-o", str(tmp_path / "site"),
                    cwd=root, env={"SOURCE_DATE_EPOCH": EPOCH})
    assert built.code == 0, built.both
    at_rev = data(tmp_path / "site" / "data" / "gallery" / "pictures.js")
    assert at_rev == data(gallery.site / "data" / "gallery" / "pictures.js")
    for cell in at_rev["cells"]:
        for picture in cell["pictures"]:
            assert (tmp_path / "site" / picture["src"]).read_bytes() == \
                (gallery.site / picture["src"]).read_bytes()
