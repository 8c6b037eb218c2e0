"""One HTTP client, one retry policy and one error sorting (smevals/net/) for every call:
the judges, the built-in runners and the webhook checker."""

from __future__ import annotations

import ast
import http.client
import json
import socket
import threading
from pathlib import Path

import pytest

import smevals
from smevals.net import retry
from smevals.net.http import Endpoint, ResponseTooLarge
from tests.helpers import make_eval
from tests.helpers.judges import newest

PACKAGE = Path(smevals.__file__).parent
SENDS = {"request", "getresponse", "urlopen"}     # what sends an HTTP request


def senders(root: Path) -> list[str]:
    """Where a module outside smevals/net/ sends an HTTP request itself."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("net/"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in SENDS and "conn" in ast.unparse(node.func.value):
                found.append(f"{rel}:{node.lineno}")
    return found


def test_only_the_one_client_sends(tmp_path: Path) -> None:
    assert senders(PACKAGE) == []
    (tmp_path / "hook.py").write_text("def f(conn):\n    conn.request('POST', '/')\n"
                                      "    return conn.getresponse()\n")
    assert senders(tmp_path) == ["hook.py:2", "hook.py:3"]


@pytest.mark.parametrize(("error", "kind"), [
    (ResponseTooLarge(1 << 20), "too_large"),
    (socket.gaierror(-2, "Name or service not known"), "unresolved"),
    (TimeoutError("timed out"), "timeout"),
    (ConnectionRefusedError(111, "Connection refused"), "refused"),
    (http.client.RemoteDisconnected("Remote end closed connection"), "reset"),
    (http.client.IncompleteRead(b"ab", 5), "reset"),
    (BrokenPipeError(32, "Broken pipe"), "reset"),
    (OSError(113, "No route to host"), "network"),
    (http.client.BadStatusLine("HTTP/9"), "network"),
    (ValueError("a bug"), None),
])
def test_errors_are_sorted_once(error: BaseException, kind: str | None) -> None:
    assert retry.sort(error) == kind


def test_the_policy_retries_a_status_and_the_kinds_it_names(fake_openai) -> None:
    endpoint = Endpoint.parse(fake_openai.base_url, "/chat/completions")
    fake_openai.enqueue(503, b"busy", headers={"Retry-After": "0"})
    fake_openai.enqueue(200, {"ok": True})
    seen: list[tuple[str, int, float]] = []
    call = retry.Call(endpoint, {}, retry.Retries(3), 5.0,
                      on_retry=lambda fault, delay: seen.append((fault.kind, fault.attempt,
                                                                 delay)))
    reply = retry.post(call, b"{}")
    assert (reply.status, json.loads(reply.body), call.attempts) == (200, {"ok": True}, 2)
    assert seen == [("status", 1, 0.0)]
    fake_openai.enqueue(500, b"down", headers={"Retry-After": "0"})
    fake_openai.enqueue(500, b"still down", headers={"Retry-After": "0"})
    with pytest.raises(retry.GaveUp) as gave_up:
        retry.post(retry.Call(endpoint, {}, retry.Retries(2), 5.0), b"{}")
    last = gave_up.value.fault.reply
    assert last is not None and (gave_up.value.attempts, last.body) == (2, b"still down")


def test_a_refused_connection_is_retried_only_when_the_policy_says(tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    endpoint = Endpoint.parse(f"http://127.0.0.1:{port}")
    with pytest.raises(retry.Fault) as fault:
        retry.post(retry.Call(endpoint, {}, retry.Retries(3), 5.0), b"")
    assert (fault.value.kind, fault.value.attempt) == ("refused", 1)
    quick = retry.Retries(3, retry.Backoff(0.0, 0.0), frozenset({"refused"}))
    with pytest.raises(retry.GaveUp) as gave_up:
        retry.post(retry.Call(endpoint, {}, quick, 5.0), b"")
    assert (gave_up.value.fault.kind, gave_up.value.attempts) == ("refused", 3)


def test_a_cancel_stops_the_pause(fake_openai) -> None:
    endpoint = Endpoint.parse(fake_openai.base_url)
    fake_openai.enqueue(429, b"slow down", headers={"Retry-After": "30"})
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    with pytest.raises(retry.Stopped) as stopped:
        retry.post(retry.Call(endpoint, {}, retry.Retries(2), 5.0, cancel), b"")
    fault = stopped.value.fault
    assert fault is not None and (stopped.value.why, stopped.value.when, fault.kind) == \
        ("cancelled", "pause", "status")


def test_a_webhook_answer_above_the_limit_gets_no_verdict(tmp_path: Path, cli,
                                                          fake_openai) -> None:
    """Before, the answer was cut at 1 MiB and read as it was."""
    fake_openai.enqueue(200, b'{"passed": true}' + b" " * (1 << 20))
    url = f"http://localhost:{fake_openai.port}/hook"
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hello\n"}, graders={
        "default": f'checks:\n  - {{checker: custom_webhook, url: "{url}", '
                   'allow_private: true}\n'})
    cli("run", str(ev))
    res = cli("grade", str(ev))
    assert res.code == 2, res.both
    [check] = newest(ev, "one")["checks"]
    assert check["ok"] is False and check.get("error") is True
    assert check["notes"] == (f"webhook {url}: the response body is above the 1 MB limit of a "
                              "response")
