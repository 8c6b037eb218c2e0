"""The one retry policy and error sorting of smevals' HTTP calls.

`sort` names what went wrong with a call (the same names for every caller); `post` makes
the attempts a `Retries` allows: an HTTP 429 or 5xx is always worth another, the error
kinds in `Retries.also` too (a judge retries a lost or refused connection and a timeout, a
Run's request only a lost connection, so that a server that is not running is said at
once). Between two attempts it pauses as `Backoff` says: exponential from 0.5 s, at most
8 s, or the server's Retry-After. A cancel event and a deadline stop it at any moment, the
request in flight included. What each caller says of a fault is its own.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from smevals.net.http import Endpoint, HttpCall, Reply, ResponseTooLarge

BACKOFF_BASE = 0.5           # seconds before the 2nd attempt, doubled for each one after
BACKOFF_CAP = 8.0            # the longest pause between two attempts
POLL = 0.05                  # seconds between looks at the cancel event and the deadline

# What sort() calls a failed call (and STATUS: a reply of HTTP 429 or 5xx).
TOO_LARGE = "too_large"      # the response is above the limit
UNRESOLVED = "unresolved"    # the host name resolves to no address
TIMEOUT = "timeout"          # a socket operation took longer than the timeout
REFUSED = "refused"          # nothing listens at the address
RESET = "reset"              # the connection was lost mid-request
NETWORK = "network"          # any other network or protocol error
STATUS = "status"


@dataclass(frozen=True)
class Backoff:
    """How long to pause before the next attempt: exponential from `base`, at most `cap`;
    a server's Retry-After (seconds) replaces it, at most `after_cap`."""

    base: float = BACKOFF_BASE
    cap: float = BACKOFF_CAP
    after_cap: float = BACKOFF_CAP

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """The pause after failed attempt number `attempt` (1 for the first)."""
        if retry_after is not None:
            return min(self.after_cap, retry_after)
        return min(self.cap, self.base * 2 ** float(attempt - 1))


@dataclass(frozen=True)
class Retries:
    """How many attempts, the pause between two, and the error kinds (besides a 429 or 5xx
    reply) worth another attempt."""

    attempts: int
    backoff: Backoff = Backoff()
    also: frozenset[str] = frozenset()


def retryable(status: int) -> bool:
    """Whether an HTTP status is worth another attempt (429 Too Many Requests, any 5xx)."""
    return status == 429 or 500 <= status <= 599


def retry_after(value: str | None) -> float | None:
    """A numeric Retry-After (seconds); an HTTP-date or garbage gives None."""
    try:
        seconds = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def sort(error: BaseException) -> str | None:
    """The kind of a call's error, or None when it is no network error (a bug: re-raised)."""
    import http.client
    import socket

    if isinstance(error, ResponseTooLarge):
        return TOO_LARGE
    if isinstance(error, socket.gaierror):
        return UNRESOLVED
    if isinstance(error, TimeoutError):
        return TIMEOUT
    if isinstance(error, ConnectionRefusedError):
        return REFUSED
    if isinstance(error, ConnectionResetError | ConnectionAbortedError | BrokenPipeError |
                  http.client.IncompleteRead):    # RemoteDisconnected is a ConnectionResetError
        return RESET
    if isinstance(error, OSError | http.client.HTTPException):
        return NETWORK
    return None


class Fault(Exception):
    """A call with no usable reply: its kind, the error (or the 429/5xx reply), the attempt
    it ended, and the timeout it was given."""

    def __init__(self, kind: str, attempt: int, error: BaseException | None = None,
                 reply: Reply | None = None, timeout: float = 0.0) -> None:
        super().__init__(kind)
        self.kind, self.attempt, self.error, self.reply = kind, attempt, error, reply
        self.timeout = timeout

    @property
    def after(self) -> float | None:
        """The server's Retry-After, if it said one."""
        return None if self.reply is None else retry_after(self.reply.headers.get("retry-after"))


class GaveUp(Exception):
    """Every attempt ended in a fault worth another; `fault` is the last one's."""

    def __init__(self, fault: Fault, attempts: int) -> None:
        super().__init__(fault.kind)
        self.fault, self.attempts = fault, attempts


class Stopped(Exception):
    """The cancel event was set (`cancelled`) or the deadline passed (`deadline`): `when`
    is `before` the request, `waiting` for it, or in the `pause` after `fault`."""

    def __init__(self, why: str, attempt: int, when: str = "waiting",
                 fault: Fault | None = None) -> None:
        super().__init__(why)
        self.why, self.attempt, self.when, self.fault = why, attempt, when, fault


@dataclass
class Call:
    """One POST to make, with its retries, its cancel event and its deadline (monotonic)."""

    endpoint: Endpoint
    headers: Mapping[str, str]
    retries: Retries
    timeout: float                       # of each socket operation
    cancel: threading.Event | None = None
    deadline: float | None = None
    on_reply: Callable[[Reply], None] | None = None      # every reply, a 429 or 5xx too
    on_retry: Callable[[Fault, float], None] | None = None  # a fault, the pause after it
    attempts: int = 0                    # made so far

    def remaining(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()


def post(call: Call, body: bytes) -> Reply:
    """The first reply that is not a 429 or 5xx; else Fault (not worth another attempt),
    GaveUp (the attempts are spent) or Stopped."""
    total = call.retries.attempts
    for attempt in range(1, total + 1):
        if call.cancel is not None and call.cancel.is_set():
            raise Stopped("cancelled", attempt, "before")
        call.attempts = attempt
        try:
            reply = _once(call, body, attempt)
        except Fault as error:
            if error.kind not in call.retries.also:
                raise
            fault = error
        else:
            if call.on_reply is not None:
                call.on_reply(reply)
            if not retryable(reply.status):
                return reply
            fault = Fault(STATUS, attempt, reply=reply)
        if attempt == total:
            raise GaveUp(fault, total)
        _pause(call, fault)
    raise AssertionError("unreachable")


def _once(call: Call, body: bytes, attempt: int) -> Reply:
    timeout, remaining = call.timeout, call.remaining()
    if remaining is not None:
        if remaining <= 0:
            raise Stopped("deadline", attempt, "before")
        timeout = min(timeout, remaining)
    http_call = HttpCall.to(call.endpoint, body, call.headers, timeout)
    while not http_call.wait(POLL):
        if call.cancel is not None and call.cancel.is_set():
            http_call.abort()
            raise Stopped("cancelled", attempt)
        if call.deadline is not None and time.monotonic() >= call.deadline:
            http_call.abort()
            raise Stopped("deadline", attempt)
    if http_call.error is not None:
        kind = sort(http_call.error)
        if kind is None:
            raise http_call.error
        raise Fault(kind, attempt, http_call.error, timeout=timeout)
    assert http_call.reply is not None
    return http_call.reply


def _pause(call: Call, fault: Fault) -> None:
    delay = call.retries.backoff.delay(fault.attempt, fault.after)
    remaining = call.remaining()
    if remaining is not None and delay >= remaining:
        raise Stopped("deadline", fault.attempt, "pause", fault)
    if call.on_retry is not None:
        call.on_retry(fault, delay)
    if call.cancel is None:
        time.sleep(delay)
    elif call.cancel.wait(delay):
        raise Stopped("cancelled", fault.attempt, "pause", fault)
