"""A judge block: which model judges, where, and with which parameters.

A block may sit on a Check (`judge:` option) and once on the grader (`judge:` at the top);
the Check's keys win over the grader's, which win over the environment defaults
(`SMEVALS_JUDGE_BACKEND`, `SMEVALS_JUDGE_MODEL`, `SMEVALS_JUDGE_BASE_URL`,
`SMEVALS_JUDGE_API_KEY_ENV`), which win over the built-in defaults below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

BACKENDS = ("openai", "replay", "llm")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_MAX_TOKENS = 1024
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 3
ENV_DEFAULTS = {
    "backend": "SMEVALS_JUDGE_BACKEND",
    "model": "SMEVALS_JUDGE_MODEL",
    "base_url": "SMEVALS_JUDGE_BASE_URL",
    "api_key_env": "SMEVALS_JUDGE_API_KEY_ENV",
}

_PRICE = {"type": "number", "minimum": 0, "x-expect": "a non-negative number"}

# JSON Schema of a judge block (the grader schema holds the same under $defs/judge).
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "x-expect": "a judge block (a mapping: model, base_url, backend, ...)",
    "properties": {
        "backend": {"enum": list(BACKENDS), "x-expect": "one of 'openai', 'replay', 'llm'"},
        "model": {"type": "string", "pattern": r"\S", "x-expect": "a model name"},
        "base_url": {"type": "string", "pattern": r"^https?://[^/\s]+",
                     "x-expect": "an http:// or https:// URL"},
        "api_key_env": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$",
                        "x-expect": "the NAME of an environment variable (never the key)"},
        "temperature": {"type": "number", "minimum": 0, "x-expect": "a number >= 0"},
        "max_tokens": {"type": "integer", "minimum": 1, "x-expect": "an integer >= 1"},
        "seed": {"type": "integer", "x-expect": "an integer"},
        "timeout": {"type": "number", "exclusiveMinimum": 0,
                    "x-expect": "a positive number of seconds"},
        "retries": {"type": "integer", "minimum": 0, "maximum": 10,
                    "x-expect": "an integer from 0 to 10"},
        "structured": {"type": "boolean", "x-expect": "true or false"},
        "responses": {"type": "string", "minLength": 1,
                      "x-expect": "a JSONL file of replayed answers, relative to the grader"},
        "price": {"type": "object", "additionalProperties": False,
                  "properties": {"input_per_mtok": _PRICE, "output_per_mtok": _PRICE},
                  "x-expect": "a mapping with input_per_mtok and output_per_mtok (USD)"},
        "allow_same_family": {"type": "boolean", "x-expect": "true or false"},
    },
}


@dataclass(frozen=True)
class Settings:
    """A resolved judge block."""

    backend: str
    model: str
    base_url: str
    api_key_env: str
    temperature: float = 0
    max_tokens: int = DEFAULT_MAX_TOKENS
    seed: int | None = None
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    structured: bool = True
    responses: str | None = None
    price: dict[str, float] = field(default_factory=dict)
    allow_same_family: bool = False

    @property
    def endpoint(self) -> str:
        """What the cache key names as the place answering (no key, no query)."""
        if self.backend == "openai":
            return self.base_url.rstrip("/")
        return self.backend

    def params(self) -> dict[str, Any]:
        """The request parameters that shape the answer (part of the cache key)."""
        out: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.seed is not None:
            out["seed"] = self.seed
        return out

    def cost(self, usage: Mapping[str, Any]) -> float | None:
        if not self.price:
            return None
        tokens_in = usage.get("input_tokens") or 0
        tokens_out = usage.get("output_tokens") or 0
        return (tokens_in * self.price.get("input_per_mtok", 0)
                + tokens_out * self.price.get("output_per_mtok", 0)) / 1e6


class JudgeConfigError(Exception):
    """The judge block cannot be used (no model, unknown backend): the Check fails."""


def resolve(check: Mapping[str, Any] | None, grader: Mapping[str, Any] | None,
            environ: Mapping[str, str]) -> Settings:
    merged: dict[str, Any] = {}
    for key, var in ENV_DEFAULTS.items():
        if environ.get(var, "").strip():
            merged[key] = environ[var].strip()
    merged.update(grader or {})
    merged.update(check or {})
    backend = merged.get("backend", "openai")
    if backend not in BACKENDS:
        raise JudgeConfigError(f"unknown judge backend {backend!r} (known: "
                               f"{', '.join(BACKENDS)})")
    model = str(merged.get("model") or "").strip()
    if not model and backend != "replay":
        raise JudgeConfigError("no judge model: set `model` in the judge block (the Check's "
                               "or the grader's) or SMEVALS_JUDGE_MODEL")
    if backend == "replay" and not merged.get("responses"):
        raise JudgeConfigError("the replay judge backend needs `responses` (a JSONL file)")
    return Settings(
        backend=backend, model=model or "replay",
        base_url=str(merged.get("base_url") or DEFAULT_BASE_URL),
        api_key_env=str(merged.get("api_key_env") or DEFAULT_KEY_ENV),
        temperature=merged.get("temperature", 0),
        max_tokens=merged.get("max_tokens", DEFAULT_MAX_TOKENS),
        seed=merged.get("seed"),
        timeout=float(merged.get("timeout", DEFAULT_TIMEOUT)),
        retries=int(merged.get("retries", DEFAULT_RETRIES)),
        structured=bool(merged.get("structured", True)),
        responses=merged.get("responses"),
        price=dict(merged.get("price") or {}),
        allow_same_family=bool(merged.get("allow_same_family", False)),
    )
