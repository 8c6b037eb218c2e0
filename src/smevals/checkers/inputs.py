"""What a checker reads: output.txt, or `file:` (workspace first, then the Run's
directory, never outside them), optionally narrowed by `extract: json`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, NoReturn

from smevals.checkers.base import CheckInput, fail
from smevals.evaldef.paths import path_problem

MAX_INPUT_BYTES = 64 * 1024 * 1024
_MAX_BARE_ATTEMPTS = 2000


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def value_text(value: object) -> str:
    """An option's value as text to compare with: a string as it is, anything else as compact
    JSON (non-ASCII kept)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def parse_json(text: str) -> Any:
    """Strict JSON (no NaN/Infinity); ValueError when `text` is not one JSON value."""
    value, end = _DECODER.raw_decode(text, _skip_ws(text, 0))
    if _skip_ws(text, end) != len(text):
        raise ValueError(f"extra data after the JSON value at offset {end}")
    return value


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\n\r":
        pos += 1
    return pos


def relative_path(name: str) -> PurePosixPath:
    """A safe relative path: no absolute path, drive, `..` or NUL (evaldef/paths.py)."""
    why = path_problem(name)
    if why is not None:
        fail(f"file: {why}")
    return PurePosixPath(name.replace("\\", "/"))


def find_file(inp: CheckInput, name: str) -> Path:
    """The named file in the Grade workspace, else in the Run's directory."""
    rel = relative_path(name)
    bases = [b for b in (inp.workspace, inp.run_dir) if b is not None]
    if not bases:
        fail(f"file: {name!r} needs a Run directory (none is given to smevals.check)")
    for base in bases:
        candidate = Path(base) / rel
        if candidate.is_file():
            _ensure_inside(candidate, Path(base), name)
            return candidate
    fail(f"no such file: {name}")


def _ensure_inside(path: Path, base: Path, name: str) -> None:
    if not path.resolve().is_relative_to(base.resolve()):
        fail(f"file: {name!r} leads outside the workspace and the Run directory")


def read_bytes(inp: CheckInput, name: str) -> bytes:
    path = find_file(inp, name)
    if path.stat().st_size > MAX_INPUT_BYTES:
        fail(f"{name} is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB")
    return path.read_bytes()


def input_text(opts: dict[str, Any], inp: CheckInput) -> tuple[str, str]:
    """(label, text) of what the check reads; label names it in notes."""
    if "file" in opts:
        name = opts["file"]
        try:
            text = read_bytes(inp, name).decode("utf-8")
        except UnicodeDecodeError:
            fail(f"{name} is not UTF-8 text")
        label = name
    else:
        label, text = "output.txt", inp.output
    if opts.get("extract") == "json":
        text = extract_json(text, label)
    return label, text


def extract_json(text: str, label: str = "output.txt") -> str:
    """The first JSON value in chatty text: a fenced block that parses, else a bare one."""
    for _info, body in iter_fences(text):
        try:
            parse_json(body)
            return body.strip()
        except ValueError:
            continue
    found = _first_bare_json(text)
    if found is None:
        fail(f"no JSON value found in {label}", score=0.0)
    return found


def _first_bare_json(text: str) -> str | None:
    pos, attempts = 0, 0
    while attempts < _MAX_BARE_ATTEMPTS:
        pos = _next_opening(text, pos)
        if pos < 0:
            return None
        attempts += 1
        try:
            _value, end = _DECODER.raw_decode(text, pos)
            return text[pos:end]
        except ValueError:
            pos += 1
    return None


def _next_opening(text: str, pos: int) -> int:
    hits = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
    return min(hits) if hits else -1


def iter_fences(text: str) -> Iterator[tuple[str, str]]:
    """(info string, body) of each fenced code block (``` or ~~~), in order."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opened = _fence_open(lines[i])
        if opened is None:
            i += 1
            continue
        marker, info = opened
        end = next((j for j in range(i + 1, len(lines)) if _closes(lines[j], marker)), len(lines))
        yield info, "\n".join(lines[i + 1 : end])
        i = end + 1


def fenced_block(text: str, tags: frozenset[str]) -> str:
    """The first fenced block tagged with one of `tags` (a program's language, sql), else the
    first untagged one, else the whole text."""
    untagged = None
    for info, body in iter_fences(text):
        tag = info.split()[0].lower() if info.split() else ""
        if tag in tags:
            return body
        if not tag and untagged is None:
            untagged = body
    return untagged if untagged is not None else text


def _fence_open(line: str) -> tuple[str, str] | None:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return None
    for ch in "`~":
        run = len(stripped) - len(stripped.lstrip(ch))
        if run >= 3:
            info = stripped[run:].strip()
            if ch == "`" and "`" in info:
                return None
            return stripped[:run], info
    return None


def _closes(line: str, marker: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(marker) and set(stripped) == {marker[0]}
