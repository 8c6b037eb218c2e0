"""What a checker program prints, checked and normalised (fail closed on anything odd)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from smevals.schemas import Violation

CORE = ("score", "metrics", "tags", "notes", "details")
_TAG_RUN = re.compile(r"[^a-z0-9]+")


def normalize_tag(tag: object) -> str:
    """`"Wearing A Hat!"` -> `wearing_a_hat`."""
    return _TAG_RUN.sub("_", str(tag).lower()).strip("_")


def normalize_tags(tags: Iterable[object]) -> list[str]:
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
    bad, problem = _problem(data)
    _keep(data, info, CORE[:CORE.index(bad)] if bad else CORE)
    if data.get("notes") not in (None, ""):
        info["notes"] = str(data["notes"])
    if details:
        info["details"] = details
    return info, problem


def _problem(data: dict[str, Any]) -> tuple[str | None, str | None]:
    """(key, words) of the first way `data` breaks checker-output.schema.json (score, then
    metrics, then tags), in words for the Check's notes; (None, None) when it does not."""
    from smevals.schemas import packaged

    schema = packaged("checker-output")
    if schema.is_valid(data):
        return None, None
    found = {v.path[0]: v for v in reversed(schema.violations(data)) if v.path}
    for key in ("score", "metrics", "tags"):
        if key in found:
            return key, _words(found[key], data[key])
    return None, None


def _words(found: Violation, value: object) -> str:
    if found.path[0] == "score":
        if found.keyword == "type":
            return f"score must be a number from 0 to 1, got {value!r}"
        return f"score must be from 0 to 1, got {value}"
    if found.path[0] == "metrics":
        if len(found.path) == 1:
            return f"metrics must be an object, got {type(value).__name__}"
        return (f"metric '{found.path[1]}' must be a finite number or a boolean, "
                f"got {found.instance!r}")
    return "tags must be a list of strings"


def _keep(data: dict[str, Any], info: dict[str, Any], keys: tuple[str, ...]) -> None:
    """The valid `keys` (those before the first bad one), normalised into `info`."""
    if "score" in keys and data.get("score") is not None:
        info["score"] = float(data["score"])
    if "metrics" in keys and data.get("metrics"):
        info["metrics"] = dict(data["metrics"])
    normal = normalize_tags(data.get("tags") or []) if "tags" in keys else []
    if normal:
        info["tags"] = normal
