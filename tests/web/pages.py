"""Asking the site: a page's script polled until true, a request to `smevals serve`, the
Eval page's explore status and Run list."""

from __future__ import annotations

import http.client
import time
from typing import Any

from smevals.site.serve import SiteServer


def wait_until(page: Any, script: str, seconds: float = 5.0) -> None:
    """Poll `script` (an expression) until true. (wait_for_function would evaluate a string
    with eval, which the site's Content Security Policy rightly refuses.)"""
    deadline = time.monotonic() + seconds
    while not page.evaluate(script):
        assert time.monotonic() < deadline, f"timed out waiting for {script}"
        page.wait_for_timeout(50)


def fetch(server: SiteServer, path: str, method: str = "GET",
          host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
    conn.putrequest(method, path, skip_host=host is not None, skip_accept_encoding=True)
    if host is not None:
        conn.putheader("Host", host)
    conn.endheaders()
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, body


STATUS = "document.querySelector('.explore-status').textContent"


LISTED = """() => [...document.querySelectorAll('table.runs tbody tr')].map(row => {
  const c = row.querySelectorAll('td');
  return [c[0].innerText, c[1].innerText.split('\\n')[0], c[3].innerText];
})"""


def listed(page: Any) -> list[tuple[str, str, str]]:
    """(task, model, result) of each Run in the Run list, read in one go (the list may be
    drawn again while it is read row by row)."""
    return [(task, model, result) for task, model, result in page.evaluate(LISTED)]
