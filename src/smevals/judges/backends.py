"""The backends that answer a judge request: an OpenAI-compatible endpoint (the client of
net/), replayed answers from a JSONL file, and the `llm` library.

Each returns an Answer or raises CallError; nothing here decides pass or fail.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from smevals import caches
from smevals.judges.settings import Settings
from smevals.store.records import JudgeRequest

if TYPE_CHECKING:
    from smevals.net.http import Endpoint, Reply
    from smevals.net.retry import Fault

RETRY_AFTER_CAP = 60.0        # a judge server's Retry-After is followed up to a minute
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

    request: JudgeRequest           # backend, endpoint, model, messages, params (the cache key)
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

def openai_body(request: JudgeRequest, images: tuple[Any, ...] = ()) -> bytes:
    from smevals.judges.images import with_images

    body = {"model": request["model"], "messages": with_images(request["messages"], images),
            **request["params"]}
    return orjson.dumps(body)


def openai(settings: Settings, request: JudgeRequest, environ: Mapping[str, str],
           cancel: threading.Event | None, images: tuple[Any, ...] = ()) -> Answer:
    from smevals.net import retry
    from smevals.net.chat import request_headers
    from smevals.net.http import Endpoint

    secret = environ.get(settings.api_key_env, "").strip()
    endpoint = Endpoint.parse(settings.base_url, "/chat/completions")
    call = retry.Call(endpoint, request_headers({}, secret), retry.Retries(
        settings.retries + 1, retry.Backoff(after_cap=RETRY_AFTER_CAP), RETRIED),
        settings.timeout, cancel)
    try:
        reply = retry.post(call, openai_body(request, images))
    except retry.Stopped as stop:
        raise CallError("cancelled", attempts=stop.attempt) from None
    except retry.GaveUp as gave_up:
        fault, total = gave_up.fault, gave_up.attempts
        raw = None if fault.reply is None else _body(fault.reply.body, secret)
        raise CallError(f"{_reason(fault, endpoint, secret)} (gave up after {total} "
                        "attempt(s))", raw, None if fault.reply is None else fault.reply.status,
                        total) from None
    except retry.Fault as fault:
        raise CallError(_reason(fault, endpoint, secret), attempts=fault.attempt) from None
    return _answer(reply, endpoint, secret, call.attempts)


# A judge retries a timeout, a refused or lost connection and any other network error (and
# a 429 or 5xx); a response above the limit or a host that does not resolve fails at once.
RETRIED = frozenset({"timeout", "refused", "reset", "network"})  # net.retry's kinds


def _reason(fault: Fault, endpoint: Endpoint, secret: str) -> str:
    """What went wrong with a call (net.retry.Fault)."""
    error = fault.error
    if fault.reply is not None:
        return f"HTTP {fault.reply.status}: {_quote(_body(fault.reply.body, secret))}"
    if fault.kind == "too_large":
        return f"{endpoint.url}: {error}"
    if fault.kind == "unresolved":
        return f"cannot resolve host {endpoint.host!r}: {error}"
    if fault.kind == "timeout":
        return f"no answer from {endpoint.url} within {fault.timeout:g} s"
    if fault.kind == "refused":
        return f"connection refused by {endpoint.host}:{endpoint.port}"
    return f"network error with {endpoint.url}: {type(error).__name__}: {error}"


def _body(data: bytes, secret: str) -> str:
    raw = data.decode("utf-8", "replace")
    return raw.replace(secret, "[redacted]") if secret and len(secret) >= 6 else raw


def _answer(reply: Reply, endpoint: Endpoint, secret: str, attempt: int) -> Answer:
    raw = _body(reply.body, secret)
    if not 200 <= reply.status <= 299:
        raise CallError(f"HTTP {reply.status} from {endpoint.url}: {_quote(raw)}", raw,
                        reply.status, attempt)
    content, usage = _completion(raw, reply.status, attempt)
    usage["latency_ms"] = reply.latency_ms
    return Answer(content, raw, reply.status, usage, reply.latency_ms, attempt)


def _completion(raw: str, status: int, attempt: int) -> tuple[str, dict[str, Any]]:
    from smevals.net.chat import content_text, first_choice, token_usage

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
