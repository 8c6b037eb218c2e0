"""Scripted local model servers speaking the three wire protocols of the real harnesses, for
the end-to-end tests of `smevals:codex`, `smevals:claude-code` and `smevals:pi` (Python's
standard library only):

- `responses`: OpenAI's Responses API, `POST /v1/responses`, streamed as server-sent events
  (Codex speaks only this);
- `anthropic`: Anthropic's Messages API, `POST /v1/messages`, streamed when the request
  says `stream: true` (Claude Code), else one JSON body;
- `chat`: OpenAI's chat completions, `POST /v1/chat/completions`, streamed with a last
  usage chunk when the request says `stream: true` (Pi), else one JSON body
  (`smevals:agent`, `smevals:openai`).

    server = ModelServer("chat", [Reply(calls=(Call("write", {...}),), usage=Usage(900, 100, 20)),
                                  Reply("Done.", usage=Usage(1000, 800, 5))]).start()
    ... point the harness at server.base_url ...
    server.billed        # the sums of the usage the server reported: what it would bill
    server.close()

Each request that offers tools takes the next scripted Reply (the last one repeats when
the script is used up); a request without tools is a harness's side request (a title, a
quota check) and gets `side` (unless `side` is None: then it takes the script too). Every
usage the server reports is added to `billed`. With `status` set, every request is
answered with that HTTP status and an error body instead.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PATHS = {"responses": "/v1/responses", "anthropic": "/v1/messages",
         "chat": "/v1/chat/completions"}


@dataclass(frozen=True)
class Usage:
    """One response's tokens as smevals counts them: `input` includes `cached` (cache
    reads), `output` includes `reasoning`."""

    input: int = 0
    cached: int = 0
    output: int = 0
    reasoning: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input + other.input, self.cached + other.cached,
                     self.output + other.output, self.reasoning + other.reasoning)

    @property
    def total(self) -> int:
        return self.input + self.output


@dataclass(frozen=True)
class Call:
    """A tool call the scripted model makes."""

    name: str
    arguments: dict[str, Any]
    id: str = "call_1"


@dataclass(frozen=True)
class Reply:
    """One scripted response: text, tool calls, and the usage reported with it."""

    text: str = ""
    calls: tuple[Call, ...] = ()
    usage: Usage = Usage(100, 0, 10)


@dataclass
class Received:
    """One request the server got."""

    method: str
    path: str
    headers: dict[str, str]         # names in lower case
    body: Any                       # the JSON body (None when not JSON)

    @property
    def side(self) -> bool:
        """A request that offers no tools: a harness's side request."""
        return not (isinstance(self.body, dict) and self.body.get("tools"))


Script = list[Reply] | Callable[[Received, int], Reply]


@dataclass
class ModelServer:
    protocol: str
    script: Script = field(default_factory=list)
    side: Reply | None = Reply("Title", usage=Usage(7, 0, 3))     # None: scripted too
    status: int | None = None
    model: str = "scripted-model"
    requests: list[Received] = field(default_factory=list)
    billed: Usage = Usage()
    turns: int = 0

    def __post_init__(self) -> None:
        if self.protocol not in PATHS:
            raise ValueError(f"unknown protocol {self.protocol!r}: one of {', '.join(PATHS)}")
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.model_server = self      # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,),
                                       daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The URL a client is given, `/v1` included."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ModelServer:
        self.thread.start()
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @property
    def main_requests(self) -> list[Received]:
        return [r for r in self.requests if r.path.startswith(PATHS[self.protocol])
                and not (r.side and self.side is not None)]

    def answer(self, request: Received) -> Reply:
        """The Reply to `request` (recorded, and its usage billed)."""
        with self.lock:
            self.requests.append(request)
            reply = self.side if request.side and self.side is not None \
                else self._next(request)
            self.billed = self.billed + reply.usage
        return reply

    def _next(self, request: Received) -> Reply:
        turn, self.turns = self.turns, self.turns + 1
        if callable(self.script):
            return self.script(request, turn)
        if not self.script:
            return Reply("(no script)")
        return self.script[min(turn, len(self.script) - 1)]


def dead_url() -> str:
    """A base URL where nothing listens (a port taken and given back at once)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# --- the handler ---


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    @property
    def model(self) -> ModelServer:
        found: ModelServer = self.server.model_server  # type: ignore[attr-defined]
        return found

    def do_GET(self) -> None:  # noqa: N802 - the name http.server looks for
        headers = {name.lower(): value for name, value in self.headers.items()}
        with self.model.lock:
            self.model.requests.append(Received("GET", self.path, headers, None))
        self._json(404, {"error": {"message": f"no {self.path} here", "type": "not_found"}})

    def do_POST(self) -> None:  # noqa: N802
        server, request = self.model, self._request()
        refused = _refusal(server, request)
        if refused is not None:
            with server.lock:
                server.requests.append(request)
            self._json(*refused)
            return
        reply = server.answer(request)
        body = request.body
        whole = WHOLE.get(server.protocol)
        if whole is not None and not (isinstance(body, dict) and body.get("stream") is True):
            self._json(200, whole(reply, server.model))
        else:
            self._events(ENCODERS[server.protocol](reply, server.model))

    def _request(self) -> Received:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        return Received("POST", self.path, headers, body)

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass

    def _events(self, events: Iterator[bytes]) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in events:
                self.wfile.write(event)
                self.wfile.flush()
        except OSError:
            pass
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


def _refusal(server: ModelServer, request: Received) -> tuple[int, Any] | None:
    """(status, body) of a request not answered by the script, else None."""
    if server.status is not None:
        return server.status, _error(server.protocol, server.status)
    if not request.path.split("?")[0].startswith(PATHS[server.protocol]):
        return 404, {"error": {"message": f"no {request.path} here", "type": "not_found"}}
    return None


def _error(protocol: str, status: int) -> dict[str, Any]:
    words = {401: "invalid x-api-key", 429: "rate limited", 500: "internal error"}
    message = words.get(status, f"error {status}")
    if protocol == "anthropic":
        kind = {401: "authentication_error", 429: "rate_limit_error"}.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}
    code = {401: "invalid_api_key"}.get(status)
    return {"error": {"message": message, "type": "invalid_request_error", "code": code}}


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    text = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {text}\n\n".encode()


_IDS = itertools.count(1)


# --- OpenAI Responses API ---


def responses_usage(usage: Usage) -> dict[str, Any]:
    return {"input_tokens": usage.input, "input_tokens_details": {"cached_tokens": usage.cached},
            "output_tokens": usage.output,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning},
            "total_tokens": usage.total}


def responses_events(reply: Reply, model: str) -> Iterator[bytes]:
    rid = f"resp_{next(_IDS)}"
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model}
    yield _sse({"type": "response.created",
                "response": {**base, "status": "in_progress", "output": []}},
               "response.created")
    output: list[dict[str, Any]] = []
    index = 0
    if reply.text:
        mid = f"msg_{rid}"
        item = {"type": "message", "id": mid, "role": "assistant", "status": "in_progress",
                "content": []}
        yield _sse({"type": "response.output_item.added", "output_index": index, "item": item},
                   "response.output_item.added")
        yield _sse({"type": "response.output_text.delta", "item_id": mid, "output_index": index,
                    "content_index": 0, "delta": reply.text}, "response.output_text.delta")
        done = {**item, "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}]}
        yield _sse({"type": "response.output_item.done", "output_index": index, "item": done},
                   "response.output_item.done")
        output.append(done)
        index += 1
    for call in reply.calls:
        item = {"type": "function_call", "id": f"fc_{call.id}", "call_id": call.id,
                "name": call.name, "arguments": json.dumps(call.arguments),
                "status": "completed"}
        yield _sse({"type": "response.output_item.added", "output_index": index, "item": item},
                   "response.output_item.added")
        yield _sse({"type": "response.output_item.done", "output_index": index, "item": item},
                   "response.output_item.done")
        output.append(item)
        index += 1
    yield _sse({"type": "response.completed",
                "response": {**base, "status": "completed", "output": output,
                             "usage": responses_usage(reply.usage)}},
               "response.completed")


# --- Anthropic Messages API ---


def anthropic_usage(usage: Usage) -> dict[str, Any]:
    """Anthropic's `input_tokens` leaves out the tokens read from the cache."""
    return {"input_tokens": usage.input - usage.cached, "cache_read_input_tokens": usage.cached,
            "cache_creation_input_tokens": 0, "output_tokens": usage.output}


def _anthropic_blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    blocks += [{"type": "tool_use", "id": f"toolu_{call.id}", "name": call.name,
                "input": call.arguments} for call in reply.calls]
    return blocks


def anthropic_message(reply: Reply, model: str) -> dict[str, Any]:
    return {"id": f"msg_{next(_IDS)}", "type": "message", "role": "assistant", "model": model,
            "content": _anthropic_blocks(reply),
            "stop_reason": "tool_use" if reply.calls else "end_turn", "stop_sequence": None,
            "usage": anthropic_usage(reply.usage)}


def anthropic_events(reply: Reply, model: str) -> Iterator[bytes]:
    whole = anthropic_message(reply, model)
    start = {**whole, "content": [], "stop_reason": None,
             "usage": {**whole["usage"], "output_tokens": 1}}
    yield _sse({"type": "message_start", "message": start}, "message_start")
    for index, block in enumerate(whole["content"]):
        if block["type"] == "text":
            yield _sse({"type": "content_block_start", "index": index,
                        "content_block": {"type": "text", "text": ""}}, "content_block_start")
            yield _sse({"type": "content_block_delta", "index": index,
                        "delta": {"type": "text_delta", "text": block["text"]}},
                       "content_block_delta")
        else:
            yield _sse({"type": "content_block_start", "index": index,
                        "content_block": {**block, "input": {}}}, "content_block_start")
            yield _sse({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta",
                                  "partial_json": json.dumps(block["input"])}},
                       "content_block_delta")
        yield _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
    yield _sse({"type": "message_delta",
                "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": reply.usage.output}}, "message_delta")
    yield _sse({"type": "message_stop"}, "message_stop")


# --- OpenAI chat completions ---


def chat_usage(usage: Usage) -> dict[str, Any]:
    return {"prompt_tokens": usage.input, "completion_tokens": usage.output,
            "total_tokens": usage.total,
            "prompt_tokens_details": {"cached_tokens": usage.cached},
            "completion_tokens_details": {"reasoning_tokens": usage.reasoning}}


def _chat_calls(reply: Reply) -> list[dict[str, Any]]:
    return [{"index": i, "id": call.id, "type": "function",
             "function": {"name": call.name, "arguments": json.dumps(call.arguments)}}
            for i, call in enumerate(reply.calls)]


def chat_completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.calls:
        message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"}
                                 for c in _chat_calls(reply)]
    return {"id": f"chatcmpl-{next(_IDS)}", "object": "chat.completion",
            "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if reply.calls else "stop"}],
            "usage": chat_usage(reply.usage)}


def chat_events(reply: Reply, model: str) -> Iterator[bytes]:
    base = {"id": f"chatcmpl-{next(_IDS)}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return _sse({**base, "choices": [{"index": 0, "delta": delta,
                                          "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": ""})
    if reply.text:
        yield chunk({"content": reply.text})
    if reply.calls:
        yield chunk({"tool_calls": _chat_calls(reply)})
    yield chunk({}, "tool_calls" if reply.calls else "stop")
    yield _sse({**base, "choices": [], "usage": chat_usage(reply.usage)})
    yield _sse("[DONE]")


ENCODERS: dict[str, Callable[[Reply, str], Iterator[bytes]]] = {
    "responses": responses_events, "anthropic": anthropic_events, "chat": chat_events}
WHOLE: dict[str, Callable[[Reply, str], dict[str, Any]]] = {
    "anthropic": anthropic_message, "chat": chat_completion}
