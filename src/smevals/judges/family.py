"""The same-family guard: a judge should not grade a model of its own family.

A model id is reduced to a family: one leading `provider/` prefix and a
`:tag` suffix are dropped, the rest lower-cased and matched against the table below, first
match wins. An id that matches nothing is its own family, so only the same unknown id
counts as the same family.
"""

from __future__ import annotations

import re

# (family, pattern on the reduced id). Documented in docs/judges.md.
FAMILIES: tuple[tuple[str, str], ...] = (
    ("anthropic", r"claude"),
    ("openai", r"gpt|chatgpt|davinci|^o\d"),
    ("google", r"gemini|gemma|palm|bison"),
    ("meta", r"llama"),
    ("mistral", r"mistral|mixtral|codestral|ministral|magistral|devstral"),
    ("cohere", r"command|cohere|aya"),
    ("deepseek", r"deepseek"),
    ("qwen", r"qwen|qwq"),
    ("microsoft", r"^phi"),
    ("xai", r"grok"),
)
_COMPILED = tuple((name, re.compile(pattern)) for name, pattern in FAMILIES)


def reduce(model: str) -> str:
    text = model.strip().lower()
    head, sep, rest = text.partition("/")
    if sep and rest:
        text = rest
    return text.split(":", 1)[0]


def family(model: str) -> str:
    """`openai/gpt-4o-mini` -> `openai`; `llama3.2:1b` -> `meta`; `my-model` -> `my-model`."""
    reduced = reduce(model)
    for name, pattern in _COMPILED:
        if pattern.search(reduced):
            return name
    return reduced


def same_family(judge: str, subject: str) -> str | None:
    """The shared family of the two models, or None."""
    if not judge.strip() or not subject.strip():
        return None
    ours, theirs = family(judge), family(subject)
    return ours if ours == theirs else None
