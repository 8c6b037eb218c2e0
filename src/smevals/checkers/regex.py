"""Regular-expression checkers on RE2 (linear time): regex, not_regex.

RE2 is imported on first use only. `compile_re2` is shared with other families.
"""

from __future__ import annotations

import functools
from typing import Any

from smevals.checkers.base import (
    BOOL,
    NONEMPTY,
    Checker,
    CheckFailure,
    CheckInput,
    CheckResult,
    binary,
    checker,
)
from smevals.checkers.inputs import input_text

CHECKERS: dict[str, Checker] = {}

FLAGS = {"type": "string", "pattern": "^[ims]*$", "x-expect": "a string of the letters i, m, s"}

_UNSUPPORTED = (
    ("invalid perl operator: (?=", "lookahead"),
    ("invalid perl operator: (?!", "lookahead"),
    ("invalid perl operator: (?<=", "lookbehind"),
    ("invalid perl operator: (?<!", "lookbehind"),
    ("invalid perl operator: (?>", "atomic groups"),
    ("invalid perl operator: (?(", "conditionals"),
    ("invalid perl operator: (?x", "verbose mode (?x)"),
    ("invalid perl operator: (?u", "Python's (?u) flag (\\pL etc. give Unicode classes)"),
    ("invalid perl operator: (?a", "Python's (?a) flag (classes are ASCII already)"),
    ("invalid escape sequence: \\Z", "\\Z (use \\z for the end of the text)"),
    ("bad repetition operator: ++", "possessive quantifiers"),
    ("bad repetition operator: *+", "possessive quantifiers"),
    ("bad repetition operator: ?+", "possessive quantifiers"),
    ("invalid repetition size", "counted repetition above {1000}"),
)


@functools.lru_cache(maxsize=512)
def compile_re2(pattern: str, flags: str = "") -> Any:
    """Compile with RE2; CheckFailure with a reason when RE2 cannot run `pattern`."""
    import re2

    options = re2.Options()
    options.log_errors = False
    prefix = "(?" + "".join(sorted(set(flags))) + ")" if flags else ""
    try:
        return re2.compile(prefix + pattern, options)
    except re2.error as exc:
        raise CheckFailure(explain_error(pattern, _message(exc))) from None


def _message(exc: Exception) -> str:
    arg = exc.args[0] if exc.args else ""
    return arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(arg)


def explain_error(pattern: str, message: str) -> str:
    """Name what RE2 lacks (backreferences, lookaround, ...) when that is the cause."""
    for prefix, feature in _UNSUPPORTED:
        if message.startswith(prefix):
            return f"RE2 does not support {feature}: {message}"
    if message.startswith("invalid perl operator: (?P"):
        if "(?P=" in pattern:
            return f"RE2 does not support backreferences: {message}"
        if "(?P>" in pattern:
            return f"RE2 does not support recursion: {message}"
    if message.startswith("invalid escape sequence: \\"):
        escape = message[len("invalid escape sequence: \\") :][:1]
        if escape.isdigit() or escape in ("k", "g"):
            return f"RE2 does not support backreferences: {message}"
    return f"invalid regex for RE2: {message}"


def _pattern_problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    pattern = opts.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        return []
    try:
        compile_re2(pattern, opts.get("flags", "") or "")
    except CheckFailure as exc:
        return [("pattern", exc.reason)]
    return []


_REGEX_OPTIONS = {
    "properties": {"pattern": NONEMPTY, "flags": FLAGS, "negate": BOOL},
    "required": ("pattern",),
    "aliases": {"value": "pattern"},
    "problems": _pattern_problems,
}


@checker(CHECKERS, "regex", "The pattern matches somewhere (RE2; flags i, m, s).", **_REGEX_OPTIONS)
def regex(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    compiled = compile_re2(opts["pattern"], opts.get("flags", ""))
    found = compiled.search(text) is not None
    if opts.get("negate"):              # promptfoo's not-regex: the text as it is
        return binary(not found, f"{opts['pattern']!r} matches {label}")
    return binary(found, f"no match for {opts['pattern']!r} in {label}")


@checker(
    CHECKERS, "not_regex", "The pattern matches nowhere (RE2; flags i, m, s).", **_REGEX_OPTIONS
)
def not_regex(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    match = compile_re2(opts["pattern"], opts.get("flags", "")).search(text)
    if match is None:
        return binary(True)
    notes = f"{label} matches {opts['pattern']!r} at offset {match.start()}"
    return binary(False, notes, offset=match.start())
