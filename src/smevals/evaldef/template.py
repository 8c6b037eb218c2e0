"""`{{name}}` placeholders: the one template syntax of judges' prompts and Configs' templates.

A placeholder is `{{NAME}}` (spaces inside the braces allowed), NAME a letter or `_` then
letters, digits, `_`, `.` or `-`. `\\{{` is a literal `{{` (the backslash is dropped); any
other `{{` that does not open a placeholder stays as written. A value that is not a string
is written as JSON (`3`, `0.5`, `true`, `null`, `["a", "b"]`, `{"k": 1}`), a date as
`2024-01-01`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import date

PLACEHOLDER = re.compile(r"\\\{\{|\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")


class TemplateError(Exception):
    """A template names a placeholder that has no value."""


def as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, date):                # YAML's 2024-01-01, as the Run record has it
        return value.isoformat()
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def substitute(template: str, value: Callable[[str], str]) -> str:
    """`template` with each placeholder replaced by `value(NAME)` (which raises TemplateError
    for a name it does not know) and each `\\{{` by `{{`."""
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        return "{{" if name is None else value(name)

    return PLACEHOLDER.sub(one, template)


def placeholders(template: str) -> list[tuple[str, str]]:
    """The NAME of every placeholder of `template`, with its text as written, in order."""
    return [(m.group(1), m.group(0)) for m in PLACEHOLDER.finditer(template) if m.group(1)]
