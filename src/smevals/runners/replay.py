"""`runner: smevals:replay`: answer every Run from a JSONL file of recorded responses.

Each line: {"task": NAME, "model": NAME, "output": TEXT, "usage": {...}?, "exit_code": INT?,
"stderr": TEXT?}. Several lines for one task and model are samples; the Run with sample_index i
takes the i-th of them (modulo their count).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from smevals import caches
from smevals.net.chat import is_int, type_name
from smevals.runners.base import BuiltinContext, BuiltinOutcome, Problems, RunFailed
from smevals.runners.options import TEXT, config_problems_for, options_schema

NAME = "replay"
SCHEMA = options_schema({"responses": TEXT}, required=["responses"])
MAX_REPORTED = 5  # malformed lines listed in stderr; the rest are only counted


def config_problems(config: Mapping[str, Any]) -> Problems:
    return config_problems_for(NAME, config, SCHEMA)


@dataclass(frozen=True)
class Recorded:
    """One recorded response (one line of the file)."""

    output: str
    line: int
    usage: dict[str, Any] | None = None
    exit_code: int = 0
    stderr: str = ""


@dataclass
class Responses:
    """A parsed responses file: samples by (task, model), and the problems of malformed lines."""

    path: Path
    samples: dict[tuple[str, str], list[Recorded]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def models_for(self, task: str) -> list[str]:
        return sorted({model for (name, model) in self.samples if name == task})


_CACHE: dict[Path, tuple[tuple[int, int], Responses]] = {}
caches.register(__name__, "_CACHE")
_LOCK = threading.Lock()


def load(path: Path) -> Responses:
    """The parsed file, cached per (path, mtime, size) for the life of the process."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        raise RunFailed(f"responses file not found: {path}", failure="launch") from None
    except OSError as error:
        raise RunFailed(f"cannot read responses file {path}: {error}", failure="launch") from None
    stamp = (stat.st_mtime_ns, stat.st_size)
    with _LOCK:
        cached = _CACHE.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        responses = parse(path, _read(path))
        _CACHE[path] = (stamp, responses)
        return responses


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise RunFailed(f"cannot read responses file {path}: {error}", failure="launch") from None


def parse(path: Path, data: bytes) -> Responses:
    """Parse JSONL `data`; blank lines are skipped, malformed lines recorded in `errors`."""
    responses = Responses(path)
    data = data.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            task, model, recorded = _parse_line(raw, number)
        except ValueError as error:
            responses.errors.append(f"{path}:{number}: {error}")
            continue
        responses.samples.setdefault((task, model), []).append(recorded)
    return responses


def _parse_line(raw: bytes, number: int) -> tuple[str, str, Recorded]:
    try:
        item = orjson.loads(raw)
    except orjson.JSONDecodeError as error:
        raise ValueError(f"invalid JSON: {error}") from None
    if not isinstance(item, dict):
        raise ValueError(f"expected a JSON object, got {type_name(item)}")
    for key in ("task", "model", "output"):
        if key not in item:
            raise ValueError(f"missing key {key!r}")
        if not isinstance(item[key], str):
            raise ValueError(f"{key!r} must be a string, not {type_name(item[key])}")
    usage, exit_code, stderr = item.get("usage"), item.get("exit_code", 0), item.get("stderr", "")
    if usage is not None and not isinstance(usage, dict):
        raise ValueError(f"'usage' must be an object, not {type_name(usage)}")
    if not is_int(exit_code):
        raise ValueError(f"'exit_code' must be an integer, not {type_name(exit_code)}")
    if not isinstance(stderr, str):
        raise ValueError(f"'stderr' must be a string, not {type_name(stderr)}")
    recorded = Recorded(item["output"], number, usage, exit_code, stderr)
    return item["task"], item["model"], recorded


def responses_path(ctx: BuiltinContext) -> Path:
    problems = config_problems(ctx.config)
    if problems:
        lines = "; ".join(f"{key}: {message}" for key, message in problems)
        raise RunFailed(f"bad config: {lines}", failure="launch")
    path = Path(str(ctx.config["responses"]))
    return (ctx.config_dir / path).resolve()


def _malformed(responses: Responses) -> RunFailed:
    """Lists the first bad lines; the last line of stderr is one of them (the Run's detail)."""
    count = len(responses.errors)
    head = f"{count} bad lines (the first {MAX_REPORTED} listed)" if count > MAX_REPORTED else (
        f"{count} bad line{'s' if count > 1 else ''}")
    lines = "\n".join(responses.errors[:MAX_REPORTED])
    return RunFailed(f"malformed responses file, {head}:\n{lines}", failure="launch")


def pick(responses: Responses, task: str, model: str, sample_index: int) -> Recorded:
    """The recorded response for this Run, or RunFailed naming what the file does have."""
    samples = responses.samples.get((task, model))
    if samples:
        return samples[sample_index % len(samples)]
    models = responses.models_for(task)
    has = (
        f"models recorded for that task: {', '.join(models)}"
        if models
        else "no model has a response for that task"
    )
    raise RunFailed(
        f"no response for task {task!r} and model {model!r} in {responses.path}; {has}"
    )


def run(ctx: BuiltinContext) -> BuiltinOutcome:
    task = ctx.task.get("name")
    if not isinstance(task, str) or not task:
        raise RunFailed("the task has no name", failure="launch")
    responses = load(responses_path(ctx))
    if responses.errors:
        raise _malformed(responses)
    recorded = pick(responses, task, ctx.model, ctx.sample_index)
    return BuiltinOutcome(
        stdout=recorded.output,
        stderr=recorded.stderr,
        exit_code=recorded.exit_code,
        usage=copy.deepcopy(recorded.usage),
        failure="exit" if recorded.exit_code != 0 else None,
    )
