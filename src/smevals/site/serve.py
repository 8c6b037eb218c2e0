"""`smevals serve`: the site's pages, computed per request from the live stores.

Routes (everything else is 404):

```
/  /index.html  /app.js  /app.css                 the app
/data/index.js  /data/stamp.js                    the Evals; their fingerprints (polled)
/data/<eval>/explore.js                           one line per Run (the Eval page's filters)
/data/<eval>/search.js                            the search's index of every output
/data/<eval>/index.js  tags/<tag>.js  tasks/<task>.js  runs/<run id>.js
/data/<eval>/history.js  diffs/<sha>.js          the History page; a commit vs its parent
/files/<eval>/runs/<run id>/<recorded path>       a file of a Run
/files/<eval>/grades/<grade id>/<recorded path>   a file of a Grade
/pictures/<eval>/runs|grades/<id>/<recorded path> the sanitised copy of an SVG file
```

A URL never names a filesystem path: each segment is decoded once and must be a plain
name (an encoded `/`, `\\`, `..`, `.` or NUL gives 404), the Eval, task, tag and object are
looked up among those loaded, and a file must be one its object's record lists, opened
without following symlinks (artifacts.open_file). Every response carries a strict Content
Security Policy and `X-Content-Type-Options: nosniff`; files of Runs and Grades are also
sandboxed. An SVG file is served as text; its picture is its sanitised copy (checkers/xmlsafe.py).
"""

from __future__ import annotations

import shutil
import socket
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import IO, Any, cast
from urllib.parse import quote, unquote

from smevals.checkers import xmlsafe
from smevals.site import artifacts, jsdata
from smevals.site.build import asset
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
from smevals.site.history import LiveHistory
from smevals.site.live import Live
from smevals.site.pages import run_page, task_page
from smevals.site.search import Index
from smevals.store.layout import slug as slug_of
from smevals.store.read import AnyObj, Obj
from smevals.store.records import FileEntry

POLL_SECONDS = 3
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
FILE_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; sandbox"
ASSET_TYPES = {"index.html": "text/html; charset=utf-8",
               "app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8",
               "explore.js": "text/javascript; charset=utf-8",
               "timeline.js": "text/javascript; charset=utf-8",
               "history.js": "text/javascript; charset=utf-8",
               "history.css": "text/css; charset=utf-8"}
JS_TYPE = "text/javascript; charset=utf-8"
LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1", "[::1]"}


@dataclass
class Response:
    status: int
    content_type: str
    body: bytes = b""
    stream: IO[bytes] | None = None
    length: int = 0
    headers: dict[str, str] = field(default_factory=dict)


NOT_FOUND = Response(404, "text/plain; charset=utf-8", b"Not found\n")


def split_path(raw: str) -> list[str] | None:
    """The decoded segments of a request path, or None when any is not a plain name."""
    raw = raw.split("?", 1)[0].split("#", 1)[0]
    if not raw.startswith("/"):
        return None
    if raw == "/":
        return []
    out = []
    for segment in raw[1:].split("/"):
        try:
            name = unquote(segment, errors="strict")
        except UnicodeDecodeError:
            return None
        # `\` is a plain character in a POSIX file name (a runner may write `a\b.txt`);
        # every segment is then looked up by exact name, never used as a path
        if name in ("", ".", "..") or any(c in name for c in "/\0"):
            return None
        out.append(name)
    return out


class ServeLinker:
    """Links a file by its recorded path, served from the object (see `file_response`)."""

    def __init__(self, slug: str):
        self.slug = slug

    def _url(self, root: str, obj: Obj[Any], path: str) -> str:
        parts = "/".join(quote(p, safe="") for p in path.split("/"))
        return f"{root}/{self.slug}/{obj.kind}s/{quote(obj.id, safe='')}/{parts}"

    def link(self, obj: Obj[Any], path: str, kind: str) -> dict[str, str]:
        href = self._url("files", obj, path)
        out = {"href": href, "download": artifacts.basename(path)}
        if kind == "image":
            out["src"] = href
        return out

    def picture(self, obj: Obj[Any], path: str, sanitised: bytes) -> str:
        return self._url("pictures", obj, path)


def _js(key: str, doc: object) -> Response:
    return Response(200, JS_TYPE, jsdata.encode(key, doc))


def route(server: SiteServer, parts: list[str]) -> Response:
    if len(parts) <= 1:
        name = parts[0] if parts else "index.html"
        return Response(200, ASSET_TYPES[name], asset(name)) if name in ASSET_TYPES else NOT_FOUND
    live = server.live
    live.refresh()
    with live.lock:
        if parts[0] == "data":
            return data_response(live, parts[1:], server.poll_seconds)
        if parts[0] in ("files", "pictures") and len(parts) >= 5:
            loaded = live.get(parts[1])
            answer = file_response if parts[0] == "files" else picture_response
            return answer(loaded, parts[2], parts[3], "/".join(parts[4:])) \
                if loaded else NOT_FOUND
    return NOT_FOUND


def data_response(live: Live, parts: list[str], poll_seconds: float) -> Response:
    if parts == ["index.js"]:
        summaries = [eval_summary(e) for e in live.evals()]
        generated = max((e.generated for e in live.evals()), default="")
        return _js("index", site_index(summaries, generated, True, poll_seconds))
    if parts == ["stamp.js"]:
        return _js("stamp", live.stamps())
    loaded = live.get(parts[0])
    if loaded is None or not parts[-1].endswith(".js"):
        return NOT_FOUND
    doc = eval_data(loaded, parts[1:-1], parts[-1][:-3], live.history(parts[0]))
    return NOT_FOUND if doc is None else _js("/".join([*parts[:-1], parts[-1][:-3]]), doc)


def eval_data(loaded: Loaded, folder: list[str], name: str,
              history: LiveHistory | None = None) -> Mapping[str, Any] | None:
    if folder == ["diffs"] or (history is not None and not folder
                               and name in ("history", "index")):
        return history_data(loaded, folder, name, history)
    if not folder and name == "diff":
        return loaded.diff
    if not folder and name == "explore":
        return explore_page(loaded, eval_index(loaded)["grid"])
    if not folder and name == "search":
        index = Index()
        explore_page(loaded, eval_index(loaded)["grid"], index)
        return index.doc(loaded.slug)
    if not folder and name == "pictures":
        return pictures_page(loaded, ServeLinker(loaded.slug)) if has_pictures(loaded) else None
    if not folder:
        return eval_index(loaded) if name == "index" else None
    if folder == ["tags"]:
        tag = next((t for t in tags_of(loaded) if slug_of(t) == name), None)
        return tag_view(loaded, tag) if tag is not None else None
    if folder == ["tasks"]:
        task = next((t for t, s in loaded.task_slugs.items() if s == name), None)
        return task_page(loaded, task) if task is not None else None
    if folder == ["runs"]:
        run = loaded.runs_by_id.get(name)
        return run_page(loaded, run, ServeLinker(loaded.slug)) if run is not None else None
    return None


def history_data(loaded: Loaded, folder: list[str], name: str,
                 history: LiveHistory | None) -> dict[str, Any] | None:
    """The History page, a commit's diff page, or the Eval page saying there is a History."""
    if history is None:
        return None
    if folder == ["diffs"]:
        return history.diff(loaded.slug, name)
    if name == "history":
        return history.page(loaded.slug, loaded.ev.name)
    return {**eval_index(loaded), "history": True}


def _lookup(loaded: Loaded, kind: str, oid: str, path: str) -> tuple[AnyObj, FileEntry] | None:
    """The object and the entry of one of its recorded files: never a link or a FIFO."""
    table = cast("Mapping[str, AnyObj] | None",
                 {"runs": loaded.runs_by_id, "grades": loaded.grades_by_id}.get(kind))
    obj = table.get(oid) if table is not None else None
    files = obj.record.get("files") if obj is not None else None
    entry: FileEntry | None
    entry = next((e for e in files if isinstance(e, dict) and e.get("path") == path), None) \
        if isinstance(files, list) else None
    if obj is None or entry is None or "symlink" in entry or entry.get("special"):
        return None
    return obj, entry


def file_response(loaded: Loaded, kind: str, oid: str, path: str) -> Response:
    found = _lookup(loaded, kind, oid, path)
    handle = artifacts.open_file(loaded.store, found[0], path) if found else None
    if found is None or handle is None:
        return NOT_FOUND
    head = handle.read(artifacts.HEAD)
    what = artifacts.kind_of(found[1], head)
    handle.seek(0, 2)
    length = handle.tell()
    handle.seek(0)
    headers = {"Content-Security-Policy": FILE_CSP}
    if what == "binary":
        headers["Content-Disposition"] = disposition(artifacts.basename(path))
    return Response(200, artifacts.content_type(what, head), stream=handle, length=length,
                    headers=headers)


def picture_response(loaded: Loaded, kind: str, oid: str, path: str) -> Response:
    """The sanitised copy of an SVG file (404 for any other file, or an SVG refused)."""
    found = _lookup(loaded, kind, oid, path)
    data = artifacts.read_bytes(loaded.store, found[0], path, xmlsafe.MAX_BYTES + 1) \
        if found else None
    if found is None or data is None or artifacts.kind_of(found[1], data) != "svg":
        return NOT_FOUND
    try:
        clean = xmlsafe.sanitise(data)
    except xmlsafe.Refused:
        return NOT_FOUND
    return Response(200, artifacts.SVG_TYPE, clean, headers={"Content-Security-Policy": FILE_CSP})


def disposition(name: str) -> str:
    plain = "".join(c if c.isascii() and c.isprintable() and c not in '"\\;' else "_"
                    for c in name)
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"


def host_allowed(server_host: str, header: str | None) -> bool:
    """When bound to a loopback address, only loopback names may be asked for: a page
    elsewhere cannot read the site through DNS rebinding."""
    if server_host not in LOOPBACK_NAMES or not header:
        return True
    name = header.rsplit(":", 1)[0] if not header.endswith("]") else header
    return name.lower() in LOOPBACK_NAMES


class Handler(BaseHTTPRequestHandler):
    server: SiteServer

    def version_string(self) -> str:
        return "smevals"

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def log_message(self, format: str, *args: object) -> None:
        return

    def _answer(self, send_body: bool) -> None:
        response = self._response()
        try:
            self._send(response, send_body)
        except (BrokenPipeError, ConnectionResetError):
            pass                       # the browser went away; nothing to tell anyone
        finally:
            if response.stream is not None:
                response.stream.close()

    def _response(self) -> Response:
        if not host_allowed(self.server.host, self.headers.get("Host")):
            return Response(403, "text/plain; charset=utf-8", b"Unexpected Host header\n")
        parts = split_path(self.path)
        if parts is None:
            return NOT_FOUND
        try:
            return route(self.server, parts)
        except Exception as exc:  # a bug: one line on the console, no traceback
            sys.stderr.write(f"smevals serve: internal error on {self.path}: "
                             f"{type(exc).__name__}: {exc}\n")
            return Response(500, "text/plain; charset=utf-8", b"Internal error\n")

    def _send(self, response: Response, send_body: bool) -> None:
        self.send_response(response.status)
        length = response.length if response.stream is not None else len(response.body)
        headers = {"Content-Type": response.content_type, "Content-Length": str(length),
                   "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
                   "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
                   "X-Frame-Options": "DENY", "Cross-Origin-Resource-Policy": "same-origin",
                   **response.headers}
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        if not send_body:
            return
        if response.stream is not None:
            shutil.copyfileobj(response.stream, self.wfile)
        else:
            self.wfile.write(response.body)


class SiteServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, live: Live, host: str, port: int, poll_seconds: float = POLL_SECONDS):
        if ":" in host:
            self.address_family = socket.AF_INET6
        self.live = live
        self.host = host
        self.poll_seconds = poll_seconds
        super().__init__((host.strip("[]"), port), Handler)

    @property
    def url(self) -> str:
        host = f"[{self.host.strip('[]')}]" if ":" in self.host else self.host
        return f"http://{host}:{self.server_address[1]}/"
