"""A Config's `prompt_template` and `system`: `{{task.KEY}}` placeholders filled per Task.

The resolved `prompt_template` is the Task's `prompt` as the runner sees it (SMEVALS_PROMPT,
SMEVALS_TASK_PROMPT, the built-ins' user message, the Run record's `task.prompt`); the
resolved `system` is the resolved config's `system` (SMEVALS_SYSTEM, SMEVALS_CONFIG_SYSTEM,
the built-ins' system message). Only the Task's own keys are reachable, never its `grading`
keys. Every placeholder is checked against every Task before any Run (`template_problems`).
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Any

from smevals.errors import Problem
from smevals.evaldef.load import display_path
from smevals.evaldef.model import Config, Task
from smevals.evaldef.template import TemplateError, as_text, placeholders, substitute

TEMPLATE_KEYS = ("prompt_template", "system")


def templates(config: Config) -> dict[str, str]:
    """The Config's text templates that are set, by key (a list of chat messages given as
    `prompt_template` is `message_templates`)."""
    return {key: config.doc[key] for key in TEMPLATE_KEYS if isinstance(config.doc.get(key), str)}


def message_templates(config: Config) -> list[dict[str, Any]] | None:
    """`prompt_template` given as a list of chat messages, else None."""
    value = config.doc.get("prompt_template")
    return value if isinstance(value, list) else None


def _texts(config: Config) -> list[tuple[str, str]]:
    """(key, template) of every template text of the Config: `system`, and `prompt_template`'s
    text or each of its messages' text (a string content, or a content part's `text`)."""
    out = list(templates(config).items())
    for message in message_templates(config) or []:
        content = message.get("content") if isinstance(message, dict) else None
        parts = [content] if isinstance(content, str) else [
            p.get("text") for p in content if isinstance(p, dict)] if isinstance(
            content, list) else []
        out += [("prompt_template", text) for text in parts if isinstance(text, str)]
    return out


def _render_message(message: dict[str, Any], task: Task) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": render(content, task)}
    if isinstance(content, list):
        return {**message, "content": [
            {**p, "text": render(p["text"], task)} if isinstance(p, dict) and isinstance(
                p.get("text"), str) else p for p in content]}
    return dict(message)


def render(template: str, task: Task) -> str:
    def value(name: str) -> str:
        problem = _refused(name)
        if problem:
            raise TemplateError(f"{{{{{name}}}}}: {problem}")
        key = name[5:]
        if key not in task.doc:
            raise TemplateError(f"{{{{{name}}}}}: Task '{task.name}' has no key '{key}'")
        return as_text(task.doc[key])

    return substitute(template, value)


def given_task(task: Task, config: Config) -> Task:
    """The Task as the runner sees it: its `prompt` is the Config's resolved template."""
    chat = message_templates(config)
    if chat is not None:
        doc = {k: v for k, v in task.doc.items() if k != "prompt"}
        return replace(task, doc={**doc, "messages": [_render_message(m, task) for m in chat]})
    template = templates(config).get("prompt_template")
    if template is None:
        return task
    return replace(task, doc={**task.doc, "prompt": render(template, task)})


def resolve_config(resolved: dict[str, Any], config: Config, task: Task) -> dict[str, Any]:
    """The resolved config of one Task's Run: `system` filled in for that Task."""
    system = templates(config).get("system")
    return resolved if system is None else {**resolved, "system": render(system, task)}


def _refused(name: str) -> str | None:
    if not name.startswith("task."):
        return (r"a Config's template takes only {{task.KEY}} placeholders (write \{{ for a "
                "literal {{)")
    key = name[5:]
    if key == "grading" or key.startswith("grading."):
        return "grading keys are only for checkers: runners never see them, nor do templates"
    return None


def template_problems(config: Config, tasks: list[Task] | tuple[Task, ...]) -> list[Problem]:
    """Each placeholder of the Config's templates that is not a Task key, or that some Task
    lacks, as one problem where it is written (naming the Tasks that lack it)."""
    shown = display_path(config.path)
    out = []
    for key, template in _texts(config):
        start = config.vlocs.get((key,), config.locs.get((key,), (1, 1)))
        first: dict[str, str] = {}
        for name, text in placeholders(template):
            first.setdefault(name, text)
        for name, text in first.items():
            lacking = [t for t in tasks if name[5:] not in t.doc]
            message = _refused(name) or _lacking(lacking, name[5:])
            if message:
                pos = _written_at(config, text, start)
                out.append(Problem(shown, *pos, f"{{{{{name}}}}}: {message}", key))
    return out


def _written_at(config: Config, text: str, start: tuple[int, int]) -> tuple[int, int]:
    """The line and column of the first `text` at or after `start` in the Config's file (as
    YAML keeps a placeholder as written), else `start`."""
    try:
        lines = config.path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return start
    line, col = start
    for number in range(line, len(lines) + 1):
        at = lines[number - 1].find(text, col - 1 if number == line else 0)
        if at >= 0:
            return number, at + 1
    return start


def _lacking(tasks: list[Task], key: str) -> str | None:
    if not tasks:
        return None
    if len(tasks) > 1:
        names = ", ".join(t.name for t in tasks[:3])
        more = f" and {len(tasks) - 3} more" if len(tasks) > 3 else ""
        graded = " (some only under `grading`, which runners never see)" \
            if any(key in t.grading for t in tasks) else ""
        return f"{len(tasks)} Tasks have no key '{key}'{graded}: {names}{more}"
    task = tasks[0]
    close = difflib.get_close_matches(key, [str(k) for k in task.doc], 1)
    hint = f" (did you mean '{close[0]}'?)" if close else ""
    if key in task.grading:
        hint = " (only under `grading`, which runners never see)"
    return f"Task '{task.name}' ({_where(task)}) has no key '{key}'{hint}"


def _where(task: Task) -> str:
    line = getattr(task, "line", 0)        # a row of a data file: its line
    shown = display_path(task.path)
    return f"{shown}:{line}" if line else shown
