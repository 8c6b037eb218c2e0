"""Prompt templates: the shipped defaults and `{{name}}` substitution.

A template is the user message; `system` is the system message. Placeholders:
`{{output}}` (the Run's output), `{{prompt}}` (the Task's prompt), `{{rubric}}`,
`{{expected}}`, `{{categories}}`, `{{scale_min}}`, `{{scale_max}}`, `{{a}}` and `{{b}}`
(pairwise), `{{format}}` (the verdict's JSON shape) and `{{task.KEY}}` (any Task key).
An unknown placeholder is an error in the grader (the Check fails). The syntax (and `\\{{`
for a literal `{{`) is evaldef/template.py's, shared with Configs' `prompt_template`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from smevals.evaldef.template import TemplateError, as_text, substitute

__all__ = ["DEFAULTS", "SYSTEM", "TemplateError", "as_text", "messages", "render"]

SYSTEM = (
    "You are a careful, impartial grader. Judge only what is asked, using the material "
    "given. Answer with exactly one JSON object and nothing else, in this shape:\n"
    "{{format}}"
)

_TASK = "The task given to the model:\n<task>\n{{prompt}}\n</task>\n\n"

DEFAULTS: dict[str, str] = {
    "judge": (
        _TASK + "The model's response:\n<response>\n{{output}}\n</response>\n\n"
        "Rubric:\n{{rubric}}\n\n"
        "Does the response meet the rubric? Set \"pass\" to true only if it does."
    ),
    "score": (
        _TASK + "The model's response:\n<response>\n{{output}}\n</response>\n\n"
        "Rubric:\n{{rubric}}\n\n"
        "Score the response against the rubric from {{scale_min}} (worst) to {{scale_max}} "
        "(best)."
    ),
    "category": (
        _TASK + "The model's response:\n<response>\n{{output}}\n</response>\n\n"
        "{{rubric}}\n\n"
        "Classify the response into exactly one of these categories: {{categories}}."
    ),
    "match": (
        "Question or task:\n<task>\n{{prompt}}\n</task>\n\n"
        "Expected answer:\n<expected>\n{{expected}}\n</expected>\n\n"
        "Given answer:\n<response>\n{{output}}\n</response>\n\n"
        "Does the given answer mean the same as the expected answer? Wording, format and "
        "extra explanation do not matter; a different or missing final answer does."
    ),
    "pairwise": (
        _TASK + "Response A:\n<response_a>\n{{a}}\n</response_a>\n\n"
        "Response B:\n<response_b>\n{{b}}\n</response_b>\n\n"
        "Criteria:\n{{rubric}}\n\n"
        "Which response meets the criteria better? Answer \"tie\" when neither is better. "
        "The order of the responses says nothing about their quality."
    ),
}

def render(template: str, values: Mapping[str, Any], task: Mapping[str, Any]) -> str:
    def one(name: str) -> str:
        if name.startswith("task."):
            key = name[5:]
            if key not in task:
                raise TemplateError(f"template placeholder {{{{{name}}}}}: the Task has no "
                                    f"key {key!r}")
            return as_text(task[key])
        if name not in values:
            known = ", ".join(sorted(values))
            raise TemplateError(f"unknown template placeholder {{{{{name}}}}} (known: {known}, "
                                "task.KEY)")
        return as_text(values[name])

    return substitute(template, one)


def messages(system: str, user: str, values: Mapping[str, Any],
             task: Mapping[str, Any]) -> list[dict[str, str]]:
    return [{"role": "system", "content": render(system, values, task)},
            {"role": "user", "content": render(user, values, task)}]
