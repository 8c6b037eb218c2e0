"""A tiny scriptable OpenAI-compatible HTTP server, for the tests and the benchmarks.

    server = FakeOpenAI().start()
    server.reply("hello")                         # a chat completion saying "hello"
    server.enqueue(429, {"error": "slow down"}, headers={"Retry-After": "1"})
    ... point a Runner at server.base_url ...
    server.requests[0].body["messages"]           # what the client sent
    server.close()

Each request takes the next scripted response; when none is left, the `responder` (a function
of the request giving a Scripted, set with `respond_with`) answers, else the server answers
418 with a message saying so (a 4xx, so that clients do not retry it).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    """One scripted response. `body` may be bytes, str, or anything JSON-serialisable."""

    status: int = 200
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering
    drop: bool = False  # close the connection without answering


@dataclass
class Received:
    """One request the server got."""

    method: str
    path: str
    headers: dict[str, str]  # names in lower case
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw)


def completion(
    content: str | None = "ok",
    *,
    model: str = "fake-model",
    usage: dict[str, Any] | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    """A chat.completion response body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


class FakeOpenAI:
    def __init__(self) -> None:
        self.script: deque[Scripted] = deque()
        self.requests: list[Received] = []
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.responder: Callable[[Received], Scripted] | None = None
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def close(self) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)

    def enqueue(self, status: int = 200, body: Any = b"", *, headers: dict[str, str] | None = None,
                delay: float = 0.0, drop: bool = False) -> None:
        with self.lock:
            self.script.append(Scripted(status, body, dict(headers or {}), delay, drop))

    def reply(self, content: str | None = "ok", **kwargs: Any) -> None:
        """Enqueue a 200 chat completion (see `completion` for the keyword arguments)."""
        self.enqueue(200, completion(content, **kwargs))

    def respond_with(self, responder: Callable[[Received], Scripted]) -> None:
        self.responder = responder

    def next_response(self, request: Received) -> Scripted:
        with self.lock:
            self.requests.append(request)
            if self.script:
                return self.script.popleft()
        if self.responder is not None:
            return self.responder(request)
        return Scripted(418, {"error": "fake_openai: no scripted response left"})


def _encode(body: Any) -> bytes:
    if isinstance(body, bytes):
        return body
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body).encode()


def _handler_for(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the name http.server looks for
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            headers = {name.lower(): value for name, value in self.headers.items()}
            scripted = server.next_response(Received("POST", self.path, headers, raw))
            if scripted.delay and server.stopping.wait(scripted.delay):
                return
            if scripted.drop:
                self.close_connection = True
                return
            self._send(scripted)

        def _send(self, scripted: Scripted) -> None:
            data = _encode(scripted.body)
            try:
                self.send_response(scripted.status)
                for name, value in scripted.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up (timeout or cancel)
                pass

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Handler
