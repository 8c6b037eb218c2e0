"""`smevals check` (cli/check_cmd.py): one built-in Check run on some text, its spec and the
Task's and usage's keys given as JSON objects (inline or @FILE)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from smevals.errors import SmevalsError


def json_object(text: str, what: str) -> dict[str, Any]:
    """The JSON object `text` holds (or the file `@PATH` holds); exit 2 naming `what`."""
    if text.startswith("@"):
        text = read_text(Path(text[1:]), what)
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise SmevalsError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise SmevalsError(f"{what} must be a JSON object, not {type(value).__name__}")
    return value


def read_text(path: Path, what: str) -> str:
    """The UTF-8 text of `path` ('-': stdin); exit 2 naming `what`."""
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    except OSError as exc:
        raise SmevalsError(f"cannot read {what} from {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SmevalsError(f"{what} in {path} is not UTF-8 text") from None


def check_command(spec_json: str, output: Callable[[], str], usage_json: str | None,
                  task_json: str | None) -> dict[str, Any]:
    """The result of the Check SPEC_JSON names on the text `output` gives (smevals.check's),
    the JSON arguments read before the output is."""
    from smevals.checkers.api import check

    spec = json_object(spec_json, "SPEC_JSON")
    usage = json_object(usage_json, "--usage") if usage_json is not None else None
    task = json_object(task_json, "--task") if task_json is not None else None
    return check(spec, output(), task=task, usage=usage)
