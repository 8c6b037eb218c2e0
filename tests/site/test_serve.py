"""`smevals serve` over raw HTTP (http.client sends the path exactly as written): routes,
security headers, content types of artifacts, and every way out of the Evals gives 404."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from smevals.commands.serve import make_server
from smevals.site import jsdata
from smevals.site.load import SiteOptions
from smevals.site.serve import CSP, FILE_CSP, SiteServer
from tests.helpers import SMEVALS
from tests.helpers.qa import make_qa, state1, state3
from tests.helpers.web.pages import fetch
from tests.helpers.web.site import Sites, start


def doc(server: SiteServer, path: str) -> dict[str, Any]:
    status, _headers, body = fetch(server, path)
    assert status == 200, path
    out: dict[str, Any] = jsdata.decode(body)[1]
    return out


def hostile_ids(sites: Sites) -> tuple[str, str]:
    run = next((sites.site / "data" / "hostile" / "runs").glob("*.js")).stem
    grade = next(g["id"] for g in jsdata.decode(
        (sites.site / "data" / "hostile" / "runs" / f"{run}.js").read_bytes())[1]["grades"])
    return run, grade


def test_the_app_and_its_data_with_strict_headers(served: SiteServer) -> None:
    status, headers, body = fetch(served, "/")
    assert status == 200 and body.startswith(b"<!doctype html>")
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert headers["content-security-policy"] == CSP
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["cache-control"] == "no-store"
    assert fetch(served, "/app.js")[1]["content-type"] == "text/javascript; charset=utf-8"
    assert fetch(served, "/app.css?v=1")[1]["content-type"] == "text/css; charset=utf-8"
    index = doc(served, "/data/index.js")
    assert index["live"] is True and [e["slug"] for e in index["evals"]] == ["hostile", "qa"]
    assert doc(served, "/data/qa/tasks/beta.js")["task"] == "beta"
    assert doc(served, "/data/qa/tags/hat.js")["tag"] == "hat"
    assert set(doc(served, "/data/stamp.js")) == {"hostile", "qa"}
    head = fetch(served, "/", method="HEAD")
    assert head[0] == 200 and head[2] == b"" and head[1]["content-length"] == str(len(body))


@pytest.mark.parametrize("path", [
    "/nope", "/index.json", "/data", "/data/nope/index.js", "/data/qa/index.json",
    "/data/qa/runs/nope.js", "/data/qa/tasks/nope.js", "/data/qa/diff.js", "/files/qa",
    "/files/qa/blobs/x/y", "/static/app.js"])
def test_unknown_routes_are_404(served: SiteServer, path: str) -> None:
    assert fetch(served, path)[0] == 404


TRAVERSALS = [
    "/../../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/data/../../etc/passwd",
    "/data/%2e%2e/%2e%2e/etc/passwd", "/data/qa%2f..%2f..%2fetc%2fpasswd",
    "/data/qa/runs/..%2f..%2f..%2f..%2fetc%2fpasswd.js", "//etc/passwd",
    "/files/hostile/runs/{run}/..%2frun.json", "/files/hostile/runs/{run}/%2e%2e/%2e%2e/x",
    "/files/hostile/runs/{run}/%252e%252e/%252e%252e/etc/passwd",
    "/files/hostile/runs/{run}/..\\..\\run.json", "/files/hostile/runs/{run}/run.json",
    "/files/hostile/runs/{run}/secret", "/files/hostile/runs/{run}/output.txt%00.png",
    "/files/hostile/runs/{run}/output.txt/..", "/files/hostile/runs/{run}/./output.txt",
    "/files/hostile/runs/{run}//output.txt", "/files/hostile/grades/{run}/output.txt",
    "/files/hostile/runs/{grade}/made.svg", "/files/hostile/runs/%2e%2e/grades/x",
    "/files/qa/runs/{run}/output.txt", "http://127.0.0.1/etc/passwd",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_no_path_leads_outside_the_evals(served: SiteServer, sites: Sites, path: str) -> None:
    run, grade = hostile_ids(sites)
    status, _headers, body = fetch(served, path.format(run=run, grade=grade))
    assert status == 404
    assert body == b"Not found\n"


@pytest.mark.parametrize("name, kind, disposition", [
    ("output.txt", "text/plain; charset=utf-8", None),
    ("page.html", "text/plain; charset=utf-8", None),
    ("evil.svg", "text/plain; charset=utf-8", None),
    ("dot.png", "image/png", None),
    ("blob.bin", "application/octet-stream",
     "attachment; filename=\"blob.bin\"; filename*=UTF-8''blob.bin"),
])
def test_artifacts_are_served_with_safe_types(served: SiteServer, sites: Sites, name: str,
                                              kind: str, disposition: str | None) -> None:
    run, _grade = hostile_ids(sites)
    status, headers, body = fetch(served, f"/files/hostile/runs/{run}/{name}")
    assert status == 200
    assert headers["content-type"] == kind
    assert headers["content-security-policy"] == FILE_CSP
    assert headers["x-content-type-options"] == "nosniff"
    assert headers.get("content-disposition") == disposition
    assert body == next((sites.hostile / "results" / "runs").rglob(name)).read_bytes()


def test_a_grade_file_is_served_too(served: SiteServer, sites: Sites) -> None:
    _run, grade = hostile_ids(sites)
    status, headers, body = fetch(served, f"/files/hostile/grades/{grade}/made.svg")
    assert status == 200 and headers["content-type"] == "text/plain; charset=utf-8"
    assert b"onload" in body


def test_an_svg_is_shown_as_its_sanitised_copy(served: SiteServer, sites: Sites) -> None:
    run, grade = hostile_ids(sites)
    status, headers, body = fetch(served, f"/pictures/hostile/runs/{run}/evil.svg")
    assert status == 200 and headers["content-type"] == "image/svg+xml"
    assert headers["content-security-policy"] == FILE_CSP
    assert headers["x-content-type-options"] == "nosniff"
    assert body == (b'<svg xmlns="http://www.w3.org/2000/svg" width="60" height="60">\n\n'
                    b'<rect width="60" height="60" fill="tomato"></rect></svg>')
    status, _headers, body = fetch(served, f"/pictures/hostile/grades/{grade}/made.svg")
    assert status == 200 and b"onload" not in body and b"<circle" in body
    for path in ("dot.png", "page.html", "secret", "output.txt", "nope.svg", "..%2fevil.svg"):
        assert fetch(served, f"/pictures/hostile/runs/{run}/{path}")[0] == 404, path


def test_a_foreign_host_name_is_refused(served: SiteServer) -> None:
    port = served.server_address[1]
    assert fetch(served, "/", host=f"attacker.example:{port}")[0] == 403
    assert fetch(served, "/", host=f"localhost:{port}")[0] == 200
    assert fetch(served, "/", method="POST")[0] == 501


@pytest.fixture
def live_qa(tmp_path: Path) -> Iterator[tuple[Path, SiteServer, object]]:
    qa = make_qa(tmp_path / "qa")
    builder = state1(qa)
    server = start(make_server(SiteOptions((str(qa),)), "127.0.0.1", 0, check_every=0.0))
    yield qa, server, builder
    server.shutdown()
    server.server_close()


def test_links_and_fifos_put_in_a_files_place_are_refused(live_qa, tmp_path: Path) -> None:
    qa, server, _builder = live_qa
    secret = tmp_path / "secret.txt"
    secret.write_text("do not serve")
    outputs = sorted((qa / "results" / "runs").rglob("output.txt"))
    outputs[0].unlink()
    outputs[0].symlink_to(secret)
    outputs[1].unlink()
    os.mkfifo(outputs[1])
    for path in outputs[:2]:
        run_id = path.parent.name
        # a FIFO opened for reading would block: fetch's 5 s socket timeout then fails this
        status, _headers, body = fetch(server, f"/files/qa/runs/{run_id}/output.txt")
        assert (status, body) == (404, b"Not found\n")
        assert b"do not serve" not in fetch(server, f"/data/qa/runs/{run_id}.js")[2]


def test_a_run_that_lands_is_served_without_a_restart(live_qa) -> None:
    qa, server, builder = live_qa
    before = doc(server, "/data/stamp.js")["qa"]["stamp"]
    assert "huge" not in [g["model"] for g in doc(server, "/data/qa/index.js")["leaderboard"]]
    state3(builder)
    assert doc(server, "/data/stamp.js")["qa"]["stamp"] != before
    index = doc(server, "/data/qa/index.js")
    assert "huge" in [g["model"] for g in index["leaderboard"]]
    assert "epsilon" in [t["name"] for t in index["tasks"]]


def test_a_broken_eval_keeps_the_last_good_reading(live_qa) -> None:
    qa, server, _builder = live_qa
    grader = qa / "graders" / "default.yaml"
    good = grader.read_text()
    grader.write_text("checks: [\n")
    stamp = doc(server, "/data/stamp.js")["qa"]
    assert "default.yaml" in stamp["error"]
    assert doc(server, "/data/qa/index.js")["summary"]["runs"] == 21
    grader.write_text(good)
    assert doc(server, "/data/stamp.js")["qa"]["error"] is None


def test_the_serve_command(tmp_path: Path) -> None:
    qa = make_qa(tmp_path / "qa")
    state1(qa)
    env = {**os.environ, "SMEVALS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([SMEVALS, "serve", str(qa), "-p", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("Serving 1 eval(s) on http://127.0.0.1:")
        port = int(line.split(":")[2].split("/")[0])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/data/qa/index.js")
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "Traceback" not in err


def test_serve_refuses_a_taken_port(served: SiteServer, tmp_path: Path) -> None:
    qa = make_qa(tmp_path / "qa")
    state1(qa)
    env = {**os.environ, "SMEVALS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([SMEVALS, "serve", str(qa), "-p", str(served.server_address[1])],
                          capture_output=True, text=True, env=env, timeout=30)
    assert proc.returncode == 2
    assert "Error: cannot listen on 127.0.0.1:" in proc.stderr
