"""Tool-call checkers (@caveman/evals) over the tool calls a Run recorded.

Where the calls come from: the Run's `transcript.jsonl` when it has one (its `tool_call`
entries: the agent runners and harness runners write it, and so may a program runner);
else the Run record's `usage.tool_calls`. The transcript wins because it is the whole
record: a harness runner shortens large arguments in `usage.tool_calls`, never in the
transcript. Without a transcript, a missing usage or a missing `tool_calls` key fails
every check: only a recorded empty list means "no tool was called".
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Any

from smevals.checkers.base import (
    ANY,
    BOOL,
    NONEMPTY,
    STRING,
    Checker,
    CheckInput,
    CheckResult,
    binary,
    checker,
    fail,
    str_list,
)
from smevals.checkers.inputs import MAX_INPUT_BYTES, parse_json
from smevals.checkers.json_checks import deep_equal, strict_path
from smevals.checkers.options import short_json

CHECKERS: dict[str, Checker] = {}

Call = tuple[str, Any]


def tool_calls(inp: CheckInput) -> list[Call]:
    """(name, arguments) of each recorded call, in order: the transcript's, else usage's."""
    data = _transcript(inp)
    if data is not None:
        from smevals.files import transcript

        return [(name, _parsed(args)) for name, args in
                transcript.tool_calls(transcript.parse(data))]
    if inp.usage is None:
        fail("the Run recorded no usage, so no tool calls")
    calls = inp.usage.get("tool_calls")
    if calls is None:
        fail("the Run's usage has no tool_calls")
    if not isinstance(calls, list):
        fail("the Run's usage.tool_calls is not a list")
    return [call for call in map(_read_call, calls) if call is not None]


def _transcript(inp: CheckInput) -> bytes | None:
    """The bytes of the Run's transcript.jsonl, None when it has none. What a runner left
    is never followed: a link or a FIFO under that name fails the Check."""
    from smevals.files.transcript import NAME

    if inp.run_dir is None:
        return None
    path = inp.run_dir / NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            fail(f"{NAME} is a symbolic link: not followed")
        fail(f"{NAME} cannot be read: {error.strerror or error}")
    with os.fdopen(fd, "rb") as stream:
        info = os.fstat(stream.fileno())
        if not stat.S_ISREG(info.st_mode):
            fail(f"{NAME} is not a regular file")
        if info.st_size > MAX_INPUT_BYTES:
            fail(f"{NAME} is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB")
        return stream.read(MAX_INPUT_BYTES + 1)


def _read_call(item: object) -> Call | None:
    """Flat `{name, arguments}`, `{tool, args}`, OpenAI `{function: {...}}` or a name."""
    if isinstance(item, str):
        return (item, {}) if item else None
    if not isinstance(item, dict):
        return None
    function = item["function"] if isinstance(item.get("function"), dict) else {}
    name = _first(item.get("name"), item.get("tool"), function.get("name"))
    if not isinstance(name, str) or not name:
        return None
    args = _first(item.get("arguments"), item.get("args"), function.get("arguments"))
    return name, _parsed(args)


def _first(*values: object) -> object:
    return next((v for v in values if v is not None), None)


def _parsed(args: object) -> object:
    if isinstance(args, str):
        try:
            return parse_json(args)
        except ValueError:
            return args
    return {} if args is None else args


def _names(calls: list[Call]) -> list[str]:
    return [name for name, _ in calls]


def _listing(names: list[str]) -> str:
    return ", ".join(repr(n) for n in names[:10]) + (" ..." if len(names) > 10 else "")


@checker(
    CHECKERS,
    "tool_called",
    "Every listed tool was called at least once.",
    properties={"tools": str_list()},
    required=("tools",),
    reads="none",
)
def tool_called(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    called = set(_names(tool_calls(inp)))
    missing = [t for t in opts["tools"] if t not in called]
    return binary(not missing, f"not called: {_listing(missing)}", called=sorted(called))


@checker(
    CHECKERS,
    "tool_not_called",
    "None of the listed tools was called.",
    properties={"tools": str_list()},
    required=("tools",),
    reads="none",
)
def tool_not_called(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    called = set(_names(tool_calls(inp)))
    found = [t for t in opts["tools"] if t in called]
    return binary(not found, f"called: {_listing(found)}", called=sorted(called))


def is_subsequence(wanted: list[str], names: list[str]) -> bool:
    remaining = iter(names)
    return all(any(name == want for name in remaining) for want in wanted)


@checker(
    CHECKERS,
    "tool_sequence",
    "The tools were called in this order (others may come between; exact: true for equality).",
    properties={"tools": str_list(), "exact": BOOL},
    required=("tools",),
    reads="none",
)
def tool_sequence(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    names = _names(tool_calls(inp))
    wanted = list(opts["tools"])
    exact = opts.get("exact", False)
    ok = names == wanted if exact else is_subsequence(wanted, names)
    what = "is not" if exact else "does not contain"
    notes = f"the call sequence {what} {_listing(wanted)} in order"
    return binary(ok, notes, calls=names[:100])


@checker(
    CHECKERS,
    "tool_argument_assertion",
    "Some call to `tool` has the argument at `path` equal to `equals`.",
    properties={"tool": NONEMPTY, "path": STRING, "equals": ANY},
    required=("tool", "path", "equals"),
    reads="none",
)
def tool_argument_assertion(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    tool, path = opts["tool"], opts["path"]
    calls = [args for name, args in tool_calls(inp) if name == tool]
    if not calls:
        return binary(False, f"{tool!r} was not called")
    seen = []
    for args in calls:
        found, value = strict_path(args, path)
        if found and deep_equal(value, opts["equals"]):
            return binary(True)
        seen.append(short_json(value) if found else "(absent)")
    notes = f"no call to {tool!r} has {path!r} equal to {short_json(opts['equals'])}"
    return binary(False, notes, seen=seen[:20])
