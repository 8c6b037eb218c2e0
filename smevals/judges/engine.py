"""Asking a judge: the cache in the store first, then the backend; every call kept.

`ask` returns the parsed verdicts of a Check's calls, or raises CheckError (the Check's
outcome is then `error`) when a call failed or an answer is not a verdict. Either way the
calls (request, raw response, verdict or error, tokens, latency, cached or not) are written
to the Check's artifact in the Grade. Only an answer that parsed as a verdict is cached.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from smevals.checkers.base import CheckError
from smevals.judges.backends import Answer, Call, CallError, answer
from smevals.judges.settings import Settings
from smevals.judges.verdict import VerdictError
from smevals.store import judgecache
from smevals.store.canonical import dumps


@dataclass
class DryCount:
    """`grade --dry-run`: judge calls the Checks would make, and how many the cache serves."""

    calls: int = 0
    cached: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)   # every request, in order
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, cached: bool, request: dict[str, Any] | None = None) -> None:
        with self.lock:
            self.calls += 1
            self.cached += cached
            if request is not None:
                self.requests.append(request)


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
                        and judgecache.has(ctx.store_root, call.request), call.request)
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
    record["cached"] = got is not None
    if got is None:
        try:
            got = answer(settings, call, ctx.environ, ctx.cancel, ctx.grader_dir)
        except CallError as error:
            record.update(error=error.reason, attempts=error.attempts)
            if error.raw is not None:
                record["response"] = {"status": error.status, "body": error.raw}
            return record
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
    return record


def _cached(ctx: JudgeContext, settings: Settings, call: Call) -> Answer | None:
    if not cacheable(settings, ctx):
        return None
    assert ctx.store_root is not None
    found = judgecache.lookup(ctx.store_root, call.request)
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
