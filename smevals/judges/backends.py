"""The backends that answer a judge request: an OpenAI-compatible endpoint (the client of
the `smevals:openai` runner), replayed answers from a JSONL file, and the `llm` library.

Each returns an Answer or raises CallError; nothing here decides pass or fail.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from smevals import caches
from smevals.judges.settings import Settings

RETRY_AFTER_CAP = 60.0        # a judge server's Retry-After is followed up to a minute
POLL = 0.05
SHOWN = 300


class CallError(Exception):
    """No usable answer (unreachable, an HTTP error after retries, a malformed body)."""

    def __init__(self, reason: str, raw: str | None = None, status: int | None = None,
                 attempts: int = 1):
        super().__init__(reason)
        self.reason, self.raw, self.status, self.attempts = reason, raw, status, attempts


@dataclass
class Answer:
    content: str
    raw: str = ""                   # the response body as received (or the replayed line)
    status: int | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    latency_ms: float | None = None
    attempts: int = 1


@dataclass(frozen=True)
class Call:
    """One request to a judge and what it is about (for replay matching and the record)."""

    request: dict[str, Any]         # backend, endpoint, model, messages, params
    task: str
    model: str                      # the Run's model
    check: str
    order: str | None = None        # "AB" or "BA" for pairwise
    output: str = ""                # the Run's output (replay's `output_contains`)
    images: tuple[Any, ...] = ()    # smevals.judges.images.Image: sent, named in `request`


def answer(settings: Settings, call: Call, environ: Mapping[str, str],
           cancel: threading.Event | None, base: Path | None) -> Answer:
    if settings.backend == "replay":
        return replay(settings, call, base)
    if settings.backend == "llm":
        return via_llm(settings, call, environ)
    return openai(settings, call.request, environ, cancel, call.images)


# --- OpenAI-compatible endpoints -------------------------------------------------------

def openai_body(request: dict[str, Any], images: tuple[Any, ...] = ()) -> bytes:
    from smevals.judges.images import with_images

    body = {"model": request["model"], "messages": with_images(request["messages"], images),
            **request["params"]}
    return orjson.dumps(body)


def openai(settings: Settings, request: dict[str, Any], environ: Mapping[str, str],
           cancel: threading.Event | None, images: tuple[Any, ...] = ()) -> Answer:
    from smevals.runners.http import Backoff, Endpoint
    from smevals.runners.openai import request_headers

    secret = environ.get(settings.api_key_env, "").strip()
    endpoint = Endpoint.parse(settings.base_url, "/chat/completions")
    headers = request_headers({}, secret)
    body = openai_body(request, images)
    total = settings.retries + 1
    policy = Backoff(after_cap=RETRY_AFTER_CAP)
    for attempt in range(1, total + 1):
        try:
            return _attempt(endpoint, body, headers, settings.timeout, cancel, attempt, secret)
        except _Retry as retry:
            if attempt == total:
                raise CallError(f"{retry.reason} (gave up after {total} attempt(s))",
                                retry.raw, retry.status, attempt) from None
            delay = policy.delay(attempt, retry.after)
            if cancel is not None and cancel.wait(delay):
                raise CallError("cancelled", attempts=attempt) from None
            if cancel is None:
                time.sleep(delay)
    raise AssertionError("unreachable")


class _Retry(Exception):
    def __init__(self, reason: str, after: float | None = None, raw: str | None = None,
                 status: int | None = None):
        super().__init__(reason)
        self.reason, self.after, self.raw, self.status = reason, after, raw, status


def _attempt(endpoint: Any, body: bytes, headers: dict[str, str], timeout: float,
             cancel: threading.Event | None, attempt: int, secret: str) -> Answer:
    import http.client
    import socket

    from smevals.runners.http import HttpCall, ResponseTooLarge, retry_after, retryable

    call = HttpCall(endpoint, body, headers, timeout)
    while not call.wait(POLL):
        if cancel is not None and cancel.is_set():
            call.abort()
            raise CallError("cancelled", attempts=attempt)
    error = call.error
    if isinstance(error, ResponseTooLarge):
        raise CallError(f"{endpoint.url}: {error}", attempts=attempt)
    if isinstance(error, socket.gaierror):
        raise CallError(f"cannot resolve host {endpoint.host!r}: {error}", attempts=attempt)
    if isinstance(error, TimeoutError):
        raise _Retry(f"no answer from {endpoint.url} within {timeout:g} s")
    if isinstance(error, ConnectionRefusedError):
        raise _Retry(f"connection refused by {endpoint.host}:{endpoint.port}")
    if isinstance(error, OSError | http.client.HTTPException):
        raise _Retry(f"network error with {endpoint.url}: {type(error).__name__}: {error}")
    if error is not None:
        raise error
    assert call.reply is not None
    reply = call.reply
    raw = reply.body.decode("utf-8", "replace")
    if secret and len(secret) >= 6:
        raw = raw.replace(secret, "[redacted]")
    if retryable(reply.status):
        raise _Retry(f"HTTP {reply.status}: {_quote(raw)}", retry_after(reply.headers.get(
            "retry-after")), raw, reply.status)
    if not 200 <= reply.status <= 299:
        raise CallError(f"HTTP {reply.status} from {endpoint.url}: {_quote(raw)}", raw,
                        reply.status, attempt)
    content, usage = _completion(raw, reply.status, attempt)
    usage["latency_ms"] = reply.latency_ms
    return Answer(content, raw, reply.status, usage, reply.latency_ms, attempt)


def _completion(raw: str, status: int, attempt: int) -> tuple[str, dict[str, Any]]:
    from smevals.runners.openai import content_text, first_choice, token_usage

    try:
        data = orjson.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        message, _finish = first_choice(data)
        content = content_text(message.get("content"))
    except (ValueError, orjson.JSONDecodeError) as error:
        raise CallError(f"malformed response body (HTTP {status}): {error}; body: "
                        f"{_quote(raw)}", raw, status, attempt) from None
    return content, token_usage(data.get("usage"))


def _quote(text: str) -> str:
    text = text.strip()
    return (text[:SHOWN] + "...") if len(text) > SHOWN else (text or "(empty body)")


# --- replayed answers ----------------------------------------------------------------

_REPLAY_CACHE: dict[tuple[str, float], list[dict[str, Any]]] = {}
caches.register(__name__, "_REPLAY_CACHE")
_REPLAY_LOCK = threading.Lock()
SELECTORS = ("task", "model", "check", "order")


def replay(settings: Settings, call: Call, base: Path | None) -> Answer:
    """The first line of the responses file whose selectors (task, model, check, order,
    `output_contains`, a text the Run's output holds, and `image_sha256`, the hash of one of
    the images sent) all match the call: its `answer` (text) or `verdict` (an object, sent
    as JSON)."""
    path = Path(settings.responses or "")
    if base is not None and not path.is_absolute():
        path = base / path
    want = {"task": call.task, "model": call.model, "check": call.check, "order": call.order}
    hashes = {image.sha256 for image in call.images}
    for line in _replay_lines(path):
        if all(line[key] == want[key] for key in SELECTORS if key in line) and \
                str(line.get("output_contains", "")) in call.output and \
                ("image_sha256" not in line or line["image_sha256"] in hashes):
            text = line["answer"] if "answer" in line else orjson.dumps(line["verdict"]).decode()
            usage = dict(line["usage"]) if isinstance(line.get("usage"), dict) else {}
            return Answer(text, orjson.dumps(line).decode(), None, usage, 0.0)
    shown = ", ".join([f"{k} {v!r}" for k, v in want.items() if v is not None]
                      + [f"image_sha256 {h!r}" for h in sorted(hashes)])
    raise CallError(f"{path.name} has no replayed answer for {shown}")


def _replay_lines(path: Path) -> list[dict[str, Any]]:
    try:
        stamp = path.stat().st_mtime
    except OSError as error:
        raise CallError(f"cannot read the replay file {path}: {error.strerror}") from None
    with _REPLAY_LOCK:
        cached = _REPLAY_CACHE.get((str(path), stamp))
        if cached is not None:
            return cached
    lines = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            item = orjson.loads(text)
        except orjson.JSONDecodeError as error:
            raise CallError(f"{path.name}:{number}: not JSON ({error})") from None
        if not isinstance(item, dict) or not (isinstance(item.get("answer"), str)
                                              or "verdict" in item):
            raise CallError(f"{path.name}:{number}: a line needs `answer` (text) or `verdict`")
        lines.append(item)
    with _REPLAY_LOCK:
        _REPLAY_CACHE[(str(path), stamp)] = lines
    return lines


# --- the llm library (smevals' `llm` extra) ----------------------------------------------

def via_llm(settings: Settings, call: Call, environ: Mapping[str, str]) -> Answer:
    try:
        import llm
    except ImportError:
        raise CallError("the llm judge backend needs the `llm` package (smevals' `llm` "
                        "extra): pip install 'llm>=0.19' where smevals is installed") from None
    from smevals.runners.llmlib import prompt_model

    messages = call.request["messages"]
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    user = "\n\n".join(m["content"] for m in messages if m["role"] != "system")
    started = time.monotonic()
    try:
        attachments = [llm.Attachment(type=image.media_type, content=image.data)
                       for image in call.images]
        text, usage = prompt_model(llm, settings.model, user, system or None,
                                   call.request["params"], environ.get(settings.api_key_env),
                                   attachments=attachments)
    except Exception as error:  # a plugin's failure is the judge's, not ours
        raise CallError(f"llm model {settings.model!r}: {type(error).__name__}: "
                        f"{error}"[:500]) from None
    latency = round((time.monotonic() - started) * 1000, 1)
    usage["latency_ms"] = latency
    return Answer(text, text, None, usage, latency)
