"""One OpenAI-compatible chat-completions call with retries, shared by the built-in Runners
that talk to such a server (`smevals:openai`, one request per Run; `smevals:agent`, one per
turn): net/retry.py's attempts within the Run's deadline and cancel event, and what a Run
says of each fault (the reading of a response is net/chat.py's).

Retries 429, 5xx and lost connections with bounded exponential backoff; a request in flight
is aborted (its socket shut down) when the Run is cancelled or its deadline passes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from smevals.net import retry
from smevals.net.chat import type_name
from smevals.net.http import Endpoint, Reply
from smevals.net.retry import BACKOFF_BASE, BACKOFF_CAP, Backoff
from smevals.runners.base import BuiltinContext, RunFailed

DEFAULT_RETRIES = 4
DEFAULT_REQUEST_TIMEOUT = 120.0
SHOWN_CHARS = 300  # of a response body quoted in stderr
# A Run retries a lost connection (besides a 429 or 5xx); a refused one is said at once.
RETRIED = frozenset({retry.RESET})


@dataclass(frozen=True)
class Plan:
    """Where the requests of one Run go, and how to retry them."""

    endpoint: Endpoint
    body: bytes
    headers: dict[str, str] = field(repr=False)
    secret: str = field(repr=False)  # the API key: only used to redact it from quoted bodies
    retries: int = DEFAULT_RETRIES
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    backoff_base: float = BACKOFF_BASE
    backoff_cap: float = BACKOFF_CAP


@dataclass(frozen=True)
class Answer:
    """A 2xx response whose body is a JSON object."""

    data: dict[str, Any]
    reply: Reply


class Session:
    """The requests of one Run, their log, and the Run's deadline."""

    def __init__(self, ctx: BuiltinContext, plan: Plan, prefix: str,
                 keep: str | None = None) -> None:
        self.ctx = ctx
        self.plan = plan
        self.prefix = prefix
        self.keep_as = keep  # the workspace file keeping the last response body
        self.deadline = None if ctx.timeout is None else time.monotonic() + ctx.timeout
        self.log: list[str] = []

    def post(self, body: bytes | None = None) -> Answer:
        """POST `body` (the plan's by default), retrying as the plan says."""
        plan = self.plan
        call = retry.Call(plan.endpoint, plan.headers, retry.Retries(
            plan.retries + 1, Backoff(plan.backoff_base, plan.backoff_cap, plan.backoff_cap),
            RETRIED), plan.request_timeout, self.ctx.cancel, self.deadline,
            on_reply=self.keep, on_retry=self.logged)
        try:
            reply = retry.post(call, plan.body if body is None else body)
        except retry.Stopped as stop:
            raise self.stopped(stop) from None
        except retry.GaveUp as gave_up:
            raise RunFailed(f"{self.reason(gave_up.fault)} (gave up after {gave_up.attempts} "
                            "attempts)", usage=_status(gave_up.fault)) from None
        except retry.Fault as fault:
            raise self.failed(fault) from None
        return self.answer(reply)

    def stderr(self) -> str:
        return "".join(f"{self.prefix}: {line}\n" for line in self.log)

    def timed_out(self, doing: str) -> RunFailed:
        return RunFailed(f"timed out after {self.ctx.timeout:g} s {doing}", failure="timeout")

    def logged(self, fault: retry.Fault, delay: float) -> None:
        total = self.plan.retries + 1
        self.log.append(f"attempt {fault.attempt}/{total}: {self.reason(fault)}; retrying in "
                        f"{delay:.2f} s")

    def reason(self, fault: retry.Fault) -> str:
        """What a fault worth another attempt was."""
        if fault.reply is not None:
            return f"HTTP {fault.reply.status}: {self.quote(fault.reply.body)}"
        return f"connection lost ({type(fault.error).__name__}: {fault.error})"

    def stopped(self, stop: retry.Stopped) -> RunFailed:
        if stop.why == "cancelled":
            return cancelled()
        if stop.when == "before":
            return self.timed_out("before the request")
        if stop.fault is not None:
            return self.timed_out(f"(no time left to retry after: {self.reason(stop.fault)})")
        return self.timed_out(f"waiting for {self.plan.endpoint.url}")

    def failed(self, fault: retry.Fault) -> RunFailed:
        """The failure of a request that is not retried."""
        endpoint, error = self.plan.endpoint, fault.error
        if fault.kind == retry.TIMEOUT:
            if self.deadline is not None and self.deadline - time.monotonic() <= retry.POLL:
                return self.timed_out(f"waiting for {endpoint.url}")
            return RunFailed(f"no response from {endpoint.url} within request_timeout "
                             f"{fault.timeout:g} s", failure="timeout")
        if fault.kind == retry.REFUSED:
            return RunFailed(f"connection refused by {endpoint.host}:{endpoint.port} (is the "
                             "server running?)")
        if fault.kind == retry.UNRESOLVED:
            return RunFailed(f"cannot resolve host {endpoint.host!r}: {error}")
        if fault.kind == retry.TOO_LARGE:
            return RunFailed(f"{endpoint.url}: {error}")
        return RunFailed(f"network error with {endpoint.url}: {type(error).__name__}: {error}")

    def answer(self, reply: Reply) -> Answer:
        status = reply.status
        if not 200 <= status <= 299:
            raise RunFailed(f"HTTP {status} from {self.plan.endpoint.url}: "
                            f"{self.quote(reply.body)}", usage={"http_status": status})
        try:
            data = orjson.loads(reply.body)
        except orjson.JSONDecodeError as error:
            raise self.malformed(reply, ValueError(f"not JSON ({error})")) from None
        if not isinstance(data, dict):
            raise self.malformed(reply, ValueError(f"expected a JSON object, got "
                                                   f"{type_name(data)}"))
        return Answer(data, reply)

    def malformed(self, reply: Reply, error: ValueError) -> RunFailed:
        """The failure of a 2xx response that is not a chat completion."""
        usage: dict[str, Any] = {"http_status": reply.status, "latency_ms": reply.latency_ms}
        return RunFailed(f"malformed response body (HTTP {reply.status}): {error}; "
                         f"body: {self.quote(reply.body)}", usage=usage)

    def quote(self, body: bytes) -> str:
        text = body.decode("utf-8", "replace").strip()
        if len(self.plan.secret) >= 6:
            text = text.replace(self.plan.secret, "[redacted]")
        if len(text) > SHOWN_CHARS:
            text = f"{text[:SHOWN_CHARS]}... ({len(body)} bytes)"
        return text or "(empty body)"

    def keep(self, reply: Reply) -> None:
        if self.keep_as is None:
            return
        try:
            (Path(self.ctx.workspace) / self.keep_as).write_bytes(reply.body)
        except OSError as error:
            self.log.append(f"could not keep the response body: {error}")


def _status(fault: retry.Fault) -> dict[str, Any] | None:
    return None if fault.reply is None else {"http_status": fault.reply.status}


def cancelled() -> RunFailed:
    return RunFailed("cancelled", exit_code=130)
