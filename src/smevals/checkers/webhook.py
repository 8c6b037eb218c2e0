"""custom_webhook: an HTTP service decides. POST `{candidate, task}` as JSON; the answer
must be a JSON object with `passed` (a boolean), optionally `score` (0 to 1) and `reason`.

The URL comes from the grader file only. A private or loopback address, a redirect or an
answer without a boolean `passed` never passes: an address refused or a redirect fails the
Check; no answer (network error, deadline, 5xx) or a malformed one makes it an `error`.
"""

from __future__ import annotations

from typing import Any

import orjson

from smevals.checkers.base import (
    BOOL,
    Checker,
    CheckError,
    CheckInput,
    CheckResult,
    checker,
    fail,
    is_number,
)
from smevals.checkers.inputs import input_text

CHECKERS: dict[str, Checker] = {}
DEFAULT_TIMEOUT = 10.0
_URL = {"type": "string", "pattern": r"^https?://[^/\s]+", "x-expect": "an http(s):// URL"}


@checker(
    CHECKERS, "custom_webhook",
    "An HTTP service decides: POST {candidate, task}, answer {passed, score?, reason?}.",
    properties={"url": _URL, "allow_private": BOOL},
    required=("url",),
)
def custom_webhook(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    from smevals.checkers import netguard

    _label, text = input_text(opts, inp)
    task = {k: v for k, v in inp.task.items()}
    try:
        body = orjson.dumps({"candidate": text, "task": task}, default=str)
    except TypeError as error:
        fail(f"cannot send the Task as JSON: {error}")
    timeout = inp.timeout or DEFAULT_TIMEOUT
    try:
        reply = netguard.post_json(opts["url"], body, timeout, opts.get("allow_private", False))
    except netguard.Refused as error:
        fail(str(error))
    except netguard.Unreachable as error:
        raise CheckError(f"webhook {opts['url']}: {error}") from None
    return _verdict(opts["url"], reply)


def _verdict(url: str, reply: Any) -> CheckResult:
    details = {"status": reply.status, "address": reply.address}
    shown = reply.body[:300].decode("utf-8", "replace")
    if 300 <= reply.status <= 399:
        fail(f"webhook {url} answered with a redirect (HTTP {reply.status}); redirects are "
             "refused", **details)
    if not 200 <= reply.status <= 299:
        raise CheckError(f"webhook {url} answered HTTP {reply.status}: {shown}", details)
    try:
        data = orjson.loads(reply.body)
    except orjson.JSONDecodeError:
        raise CheckError(f"webhook {url} did not answer with JSON: {shown}", details) from None
    if not isinstance(data, dict) or not isinstance(data.get("passed"), bool):
        raise CheckError(f"webhook {url}: the answer needs a boolean `passed`: {shown}", details)
    score = data.get("score")
    if score is not None and not (is_number(score) and 0 <= score <= 1):
        raise CheckError(f"webhook {url}: `score` must be a number from 0 to 1, not {score!r}",
                         details)
    reason = data.get("reason")
    if reason is not None:
        details["reason"] = str(reason)
    passed = data["passed"]
    if score is None:
        score = 1.0 if passed else 0.0
    notes = "" if passed else f"webhook: {reason or 'failed'}"[:500]
    return CheckResult(ok=passed, score=float(score), notes=notes, details=details)
