"""From a judge Check's options to its calls: settings, the same-family guard, prompts."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from smevals.checkers.base import CheckInput, fail
from smevals.judges import templates, verdict
from smevals.judges.backends import Call
from smevals.judges.engine import JudgeContext, ask
from smevals.judges.family import same_family
from smevals.judges.settings import JudgeConfigError, Settings, resolve
from smevals.store.records import JudgeRequest


def settings_for(opts: dict[str, Any], ctx: JudgeContext) -> Settings:
    try:
        return resolve(opts.get("judge"), ctx.grader_judge, ctx.environ)
    except JudgeConfigError as error:
        fail(str(error))


def ask_check(opts: dict[str, Any], inp: CheckInput, kind: str, values: dict[str, Any],
              output: str, categories: list[str] | None, scale: tuple[float, float],
              reference: str | None, template: str | None, images: tuple[Any, ...] = ()
              ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    import os

    judge = inp.judge               # a grade hands a JudgeContext (grade/apply.py)
    ctx = judge if isinstance(judge, JudgeContext) else JudgeContext(environ=dict(os.environ))
    settings = settings_for(opts, ctx)
    shared = same_family(settings.model, ctx.run_model) if settings.backend != "replay" else None
    if shared and not settings.allow_same_family:
        fail(f"judge {settings.model!r} is of the same model family ({shared}) as the Run's "
             f"model {ctx.run_model!r}; use a judge of another family, or set "
             "allow_same_family: true in the judge block")
    task = inp.task
    values = {**values, "output": output, "prompt": prompt_text(task),
              "format": verdict.answer_format(kind, categories, scale)}
    system = str(opts.get("system") or templates.SYSTEM)
    user = template or templates.DEFAULTS[kind]
    params = settings.params()
    if settings.structured and settings.backend != "replay":
        params["response_format"] = {"type": "json_schema", "json_schema": {
            "name": f"{kind}_verdict", "strict": True,
            "schema": verdict.json_schema(kind, categories)}}
    label = inp.check_name or _NAMES[kind]
    orders: list[tuple[str | None, dict[str, Any]]] = [(None, values)]
    if kind == "pairwise":
        orders = [("AB", {**values, "a": output, "b": reference}),
                  ("BA", {**values, "a": reference, "b": output})]
    calls = []
    for order, filled in orders:
        try:
            messages = templates.messages(system, user, filled, task)
        except templates.TemplateError as error:
            fail(str(error))
        request: JudgeRequest = {"backend": settings.backend, "endpoint": settings.endpoint,
                                 "model": settings.model, "messages": messages, "params": params}
        if images:                  # by media type and sha256: the cache key names them
            request["images"] = [image.request() for image in images]
        calls.append(Call(request, str(task.get("name", "")), ctx.run_model, label, order,
                          output, tuple(images)))

    def parse(text: str) -> dict[str, Any]:
        return verdict.parse(kind, text, categories, scale)

    artifact = None
    if inp.workspace is not None:
        artifact = inp.workspace / artifact_name(ctx.index, label)
    return ask(ctx, settings, calls, parse, artifact)


_NAMES = {"judge": "llm_judge", "score": "llm_score", "category": "llm_category",
          "match": "llm_answer_match", "pairwise": "llm_pairwise"}


def prompt_text(task: Mapping[str, Any]) -> str:
    """What the model was asked, for a judge's `{{prompt}}`: the Task's prompt, else its chat
    messages one by one (`ROLE: text`, a content's text parts), else nothing."""
    prompt = task.get("prompt")
    if isinstance(prompt, str):
        return prompt
    messages = task.get("messages")
    if not isinstance(messages, list):
        return ""
    lines = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        text = content if isinstance(content, str) else "\n".join(
            str(p.get("text")) for p in content if isinstance(p, dict) and "text" in p
        ) if isinstance(content, list) else ""
        lines.append(f"{message.get('role', '?')}: {text}")
    return "\n\n".join(lines)


_SLUG = re.compile(r"[^a-z0-9]+")


def artifact_name(index: int, label: str) -> str:
    """`judge-2-tone.json`: the file of a judged Check in its Grade."""
    slug = _SLUG.sub("-", label.lower()).strip("-")[:40] or "check"
    return f"judge-{index + 1}-{slug}.json"
