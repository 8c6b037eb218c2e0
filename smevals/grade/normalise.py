"""What a checker program prints, checked and normalised (fail closed on anything odd)."""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

CORE = ("score", "metrics", "tags", "notes", "details")
_TAG_RUN = re.compile(r"[^a-z0-9]+")


def normalize_tag(tag: Any) -> str:
    """`"Wearing A Hat!"` -> `wearing_a_hat`."""
    return _TAG_RUN.sub("_", str(tag).lower()).strip("_")


def normalize_tags(tags: Any) -> list[str]:
    return sorted({t for t in (normalize_tag(x) for x in tags if str(x).strip()) if t})


def parse_stdout(text: str) -> tuple[dict[str, Any], str | None]:
    """(info, problem): info has score/metrics/tags/notes/details; problem fails the Check."""
    stripped = text.strip()
    if not stripped:
        return {}, None
    try:
        data = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return {"details": {"output": stripped}}, None
    if not isinstance(data, dict):
        return {"details": {"output": stripped}}, (
            f"checker printed JSON that is not an object ({type(data).__name__})")
    return normalise_info(data)


def normalise_info(data: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    info: dict[str, Any] = {}
    details = dict(data["details"]) if isinstance(data.get("details"), dict) else {}
    if "details" in data and not isinstance(data["details"], dict):
        details["details"] = data["details"]
    details.update({k: v for k, v in data.items() if k not in CORE})
    problem = _score(data, info) or _metrics(data, info) or _tags(data, info)
    if data.get("notes") not in (None, ""):
        info["notes"] = str(data["notes"])
    if details:
        info["details"] = details
    return info, problem


def _score(data: dict[str, Any], info: dict[str, Any]) -> str | None:
    score = data.get("score")
    if score is None:
        return None
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
        return f"score must be a number from 0 to 1, got {score!r}"
    if not 0 <= score <= 1:
        return f"score must be from 0 to 1, got {score}"
    info["score"] = float(score)
    return None


def _metrics(data: dict[str, Any], info: dict[str, Any]) -> str | None:
    metrics = data.get("metrics")
    if metrics is None:
        return None
    if not isinstance(metrics, dict):
        return f"metrics must be an object, got {type(metrics).__name__}"
    for key, value in metrics.items():
        ok_number = isinstance(value, (int, float)) and math.isfinite(value)
        if not (isinstance(value, bool) or ok_number):
            return f"metric '{key}' must be a finite number or a boolean, got {value!r}"
    if metrics:
        info["metrics"] = dict(metrics)
    return None


def _tags(data: dict[str, Any], info: dict[str, Any]) -> str | None:
    tags = data.get("tags")
    if tags is None:
        return None
    if not isinstance(tags, list) or any(isinstance(t, (dict, list)) for t in tags):
        return "tags must be a list of strings"
    normal = normalize_tags(tags)
    if normal:
        info["tags"] = normal
    return None
