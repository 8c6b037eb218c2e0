"""Asking a judge: the cache in the store first, then the backend; every call kept.

`ask` returns the parsed verdicts of a Check's calls, or raises CheckError (the Check's
outcome is then `error`) when a call failed or an answer is not a verdict. Either way the
calls (request, raw response, verdict or error, tokens, latency, cached or not) are written
to the Check's artifact in the Grade. Only an answer that parsed as a verdict is cached.
Identical requests of one grade are sent once (judges/flights.py); the others are marked
`shared` and counted as answered without a call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from smevals.checkers.base import CheckError
from smevals.files.canonical import dumps
from smevals.judges.backends import Answer, Call, CallError, answer
from smevals.judges.flights import Asked
from smevals.judges.settings import Settings
from smevals.judges.verdict import VerdictError
from smevals.store import judgecache
from smevals.store.records import JudgeRequest


@dataclass
class DryCount:
    """`grade --dry-run`: judge calls the Checks would make, and how many the cache serves."""

    calls: int = 0
    cached: int = 0
    shared: int = 0                 # not cached, but the same as a request counted before
    requests: list[JudgeRequest] = field(default_factory=list)     # every request, in order
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    keys: set[str] = field(default_factory=set, repr=False)

    def add(self, cached: bool, request: JudgeRequest | None = None,
            once: bool = False) -> None:
        """Count one call; `once`: identical requests are asked once (not for replay)."""
        with self.lock:
            self.calls += 1
            self.cached += cached
            if request is not None:
                self.requests.append(request)
                if once and not cached:
                    key = judgecache.request_key(request)
                    self.shared += key in self.keys
                    self.keys.add(key)


class DryRun(Exception):
    """Raised once a Check's calls are counted: nothing is asked in a dry run."""


@dataclass(frozen=True)
class JudgeContext:
    """What judge Checks need beyond the output and the Task."""

    store_root: Path | None = None
    use_cache: bool = True
    environ: Mapping[str, str] = field(default_factory=dict)
    grader_judge: Mapping[str, Any] | None = None
    grader_dir: Path | None = None
    run_model: str = ""
    index: int = 0                              # the Check's place in the grader
    cancel: threading.Event | None = None
    find_output: Callable[[str, str | None], str | None] | None = None
    dry: DryCount | None = None
    asked: Asked | None = None                  # identical requests of this grade: once


def storable(settings: Settings, ctx: JudgeContext) -> bool:
    """Answers of this backend go into the judge cache (replayed ones do not)."""
    return ctx.store_root is not None and settings.backend != "replay"


def cacheable(settings: Settings, ctx: JudgeContext) -> bool:
    """The judge cache may answer (not with --no-judge-cache)."""
    return ctx.use_cache and storable(settings, ctx)


def ask(ctx: JudgeContext, settings: Settings, calls: list[Call],
        parse: Callable[[str], dict[str, Any]], artifact: Path | None
        ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(verdicts, usage summary) of `calls`; CheckError when any has no verdict."""
    if ctx.dry is not None:
        for call in calls:
            ctx.dry.add(cacheable(settings, ctx) and ctx.store_root is not None
                        and judgecache.has(ctx.store_root, call.request), call.request,
                        storable(settings, ctx))
        raise DryRun
    if len(calls) > 1:              # pairwise: both orders asked at once
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(len(calls), thread_name_prefix="smevals-judge") as pool:
            records = list(pool.map(lambda call: _one(ctx, settings, call, parse), calls))
    else:
        records = [_one(ctx, settings, call, parse) for call in calls]
    usage = _usage(settings, records)
    if artifact is not None:
        artifact.write_bytes(dumps({"check": calls[0].check if calls else "",
                                    "judge": {"backend": settings.backend,
                                              "model": settings.model,
                                              "endpoint": settings.endpoint},
                                    "calls": records, "usage": usage}))
    failed = [r for r in records if r.get("error")]
    if failed:
        raise CheckError(f"judge error: {failed[0]['error']}", details={"judge": usage})
    return [r["verdict"] for r in records], usage


def _one(ctx: JudgeContext, settings: Settings, call: Call,
         parse: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    record: dict[str, Any] = {"request": call.request,
                              "cache_key": judgecache.request_key(call.request)}
    if call.order:
        record["order"] = call.order
    if call.images:                 # which files the request's image hashes are
        record["images"] = [image.evidence() for image in call.images]
    got = _cached(ctx, settings, call)
    cached, shared = got is not None, False
    if got is None:
        got, error, shared = _ask_once(ctx, settings, call)
        if shared:
            record["shared"] = True
        if error is not None:
            record.update(cached=False, error=error.reason, attempts=error.attempts)
            if error.raw is not None:
                record["response"] = {"status": error.status, "body": error.raw}
            return record
    assert got is not None
    record["cached"] = cached or shared
    record.update(response={"status": got.status, "body": got.raw}, content=got.content,
                  usage=got.usage, latency_ms=got.latency_ms, attempts=got.attempts)
    try:
        record["verdict"] = parse(got.content)
    except VerdictError as error:
        record["error"] = f"unparseable verdict: {error}"
        return record
    if not record["cached"] and storable(settings, ctx):
        assert ctx.store_root is not None
        created = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        judgecache.keep(ctx.store_root, call.request,
                        {"content": got.content, "body": got.raw, "status": got.status,
                         "usage": got.usage, "latency_ms": got.latency_ms}, created)
        if ctx.asked is not None:
            ctx.asked.stored(record["cache_key"])
    return record


def _ask_once(ctx: JudgeContext, settings: Settings, call: Call
              ) -> tuple[Answer | None, CallError | None, bool]:
    """(answer, error, shared): the backend's answer to `call`, asked once per distinct
    request of the grade (judges/flights.py); `shared` when another Check asked it."""
    asked = ctx.asked if storable(settings, ctx) else None
    if asked is None:
        return _send(ctx, settings, call)
    flight, first = asked.claim(judgecache.request_key(call.request))
    if first:
        got: tuple[Answer | None, CallError | None, bool] = \
            (None, CallError("the call did not finish"), False)
        try:
            got = _send(ctx, settings, call)
        finally:
            asked.settle(flight, got[0], got[1])
        return got
    landed = asked.outcome(flight, ctx.cancel)
    if landed is None:
        return None, CallError("cancelled", attempts=0), True
    answer_, error, stored = landed
    if stored:
        assert ctx.store_root is not None
        answer_ = _from_cache(ctx.store_root, call)
        if answer_ is None:                 # gone meanwhile: ask it here
            return _send(ctx, settings, call)
    if error is not None:
        return None, CallError(error.reason, error.raw, error.status, error.attempts), True
    return answer_, None, True


def _send(ctx: JudgeContext, settings: Settings, call: Call
          ) -> tuple[Answer | None, CallError | None, bool]:
    try:
        return answer(settings, call, ctx.environ, ctx.cancel, ctx.grader_dir), None, False
    except CallError as error:
        return None, error, False


def _cached(ctx: JudgeContext, settings: Settings, call: Call) -> Answer | None:
    if not cacheable(settings, ctx):
        return None
    assert ctx.store_root is not None
    return _from_cache(ctx.store_root, call)


def _from_cache(root: Path, call: Call) -> Answer | None:
    """The newest sound cache entry's answer to `call` (attempts 0: no call made)."""
    found = judgecache.lookup(root, call.request)
    if found is None or not isinstance(found.get("content"), str):
        return None
    usage = found.get("usage") if isinstance(found.get("usage"), dict) else {}
    return Answer(found["content"], str(found.get("body", "")), found.get("status"),
                  dict(usage or {}), found.get("latency_ms"), 0)


def _usage(settings: Settings, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Calls made, calls the cache served, and the tokens (and cost) of the calls made."""
    out: dict[str, Any] = {"model": settings.model, "backend": settings.backend,
                           "calls": 0, "cached": 0, "input_tokens": 0, "output_tokens": 0}
    for record in records:
        if record.get("shared") and record.get("error"):
            continue                        # the call that failed is counted where made
        if record.get("cached"):
            out["cached"] += 1
            continue
        out["calls"] += 1
        usage = record.get("usage") or {}
        for key in ("input_tokens", "output_tokens"):
            value = usage.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                out[key] += value
    cost = settings.cost(out)
    if cost is not None:
        out["cost_usd"] = round(cost, 8)
    return out
