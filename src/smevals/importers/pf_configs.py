"""promptfoo `providers`, and `prompts` × `providers` → smevals Configs (`smevals:openai`
runner, templates)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from smevals.importers.pf_prompts import Prompt, safe_name
from smevals.importers.pf_source import Source, short

OLLAMA_URL = "http://localhost:11434/v1"
PARAMS = ("top_p", "seed", "stop", "presence_penalty", "frequency_penalty", "tools",
          "tool_choice", "response_format")


@dataclass
class Provider:
    label: str
    doc: dict[str, Any]
    prompts: list[str] | None      # the prompt labels this provider is limited to
    index: int = 0                 # its place in the config's providers
    pid: str = ""                  # its promptfoo id
    given_label: str = ""          # its promptfoo label, as written


@dataclass(frozen=True)
class ConfigPlan:
    """One imported Config: its document, and the promptfoo prompt (index in the prompts
    list as promptfoo expands it) and provider (index in `providers`) it stands for."""

    doc: dict[str, Any]
    prompt: int
    provider: int | None
    provider_id: str = ""
    provider_label: str = ""


def read_providers(src: Source) -> list[Provider]:
    raw = src.data.get("providers", src.data.get("targets"))
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    out: list[Provider] = []
    for i, item in enumerate(items):
        where = src.where(raw, i) if isinstance(raw, list) else src.where(src.data)
        if isinstance(item, dict) and "id" not in item and len(item) == 1:
            key, val = next(iter(item.items()))
            item = {"id": key, **(val if isinstance(val, dict) else {})}
        provider = _provider(src, item, where)
        if provider is not None:
            provider.index = i
            provider.pid = str(item if isinstance(item, str) else item.get("id"))
            given = item.get("label") if isinstance(item, dict) else None
            provider.given_label = str(given) if given else ""
            out.append(provider)
    seen: set[str] = set()
    for p in out:
        base, n = p.label, 2
        while p.label in seen:
            p.label, n = f"{base}-{n}", n + 1
        seen.add(p.label)
    return out


def _provider(src: Source, item: object, where: str) -> Provider | None:
    pid = item if isinstance(item, str) else item.get("id") if isinstance(item, dict) else None
    if not isinstance(pid, str):
        src.skip(where, f"provider {short(item)}", "not a provider id or object")
        return None
    conf = item.get("config") if isinstance(item, dict) else None
    conf = conf if isinstance(conf, dict) else {}
    parts = pid.split(":")
    if parts[0] == "openai" and (len(parts) == 2 or (len(parts) >= 3 and parts[1] == "chat")):
        model = ":".join(parts[2:] if parts[1] == "chat" else parts[1:])
        doc: dict[str, Any] = {"runner": "smevals:openai", "model": model}
        _openai_url(conf, doc)
    elif parts[0] == "ollama" and (len(parts) == 2 or (len(parts) >= 3 and parts[1] == "chat")):
        model = ":".join(parts[2:] if parts[1] == "chat" else parts[1:])
        doc = {"runner": "smevals:openai", "model": model, "base_url": OLLAMA_URL}
        if "num_predict" in conf:
            conf = {**conf, "max_tokens": conf["num_predict"]}
            conf.pop("num_predict")
    else:
        src.skip(where, f"provider {pid!r}", "only openai:chat:MODEL, openai:MODEL and "
                 "ollama:chat:MODEL have a counterpart (the smevals:openai runner)")
        return None
    if not model:
        src.skip(where, f"provider {pid!r}", "names no model")
        return None
    _options(src, conf, doc, where, pid)
    label = item.get("label") if isinstance(item, dict) else None
    limit = item.get("prompts") if isinstance(item, dict) else None
    return Provider(safe_name(str(label or model)), doc,
                    [safe_name(str(x)) for x in limit] if isinstance(limit, list) else None)


def _openai_url(conf: dict[str, Any], doc: dict[str, Any]) -> None:
    if isinstance(conf.get("apiBaseUrl"), str):
        doc["base_url"] = conf["apiBaseUrl"].rstrip("/")
    elif isinstance(conf.get("apiHost"), str):
        doc["base_url"] = f"https://{conf['apiHost']}/v1"
    if isinstance(conf.get("apiKeyEnvar"), str):
        doc["api_key_env"] = conf["apiKeyEnvar"]


def _options(src: Source, conf: dict[str, Any], doc: dict[str, Any], where: str,
             pid: str) -> None:
    params: dict[str, Any] = {}
    for key, value in conf.items():
        if key in ("apiBaseUrl", "apiHost", "apiKeyEnvar"):
            continue
        if isinstance(value, str) and value.startswith("file://"):
            src.skip(where, f"provider {pid!r} config.{key}", "a file:// value is not read "
                     "into a Config; copy it in by hand")
        elif key in ("temperature", "max_tokens") and isinstance(value, int | float):
            doc[key] = value
        elif key in PARAMS:
            params[key] = value
        else:
            src.skip(where, f"provider {pid!r} config.{key}", "no counterpart in the "
                     "smevals:openai runner")
    if params:
        doc["params"] = params


def config_matrix(prompts: list[Prompt], providers: list[Provider]
                  ) -> dict[str, ConfigPlan]:
    """Config name → what it is: one per prompt × provider (a provider's `prompts` limits
    it). One of each is `default`; with one side single, the other side's name."""
    configs: dict[str, ConfigPlan] = {}
    runs = providers or [Provider("", {"runner": "smevals:openai"}, None)]
    for prov in runs:
        for prompt in prompts:
            if prov.prompts is not None and prompt.label not in prov.prompts:
                continue
            name = _name(prompt.label, prov.label, len(prompts), len(runs))
            doc = dict(prov.doc)
            if prompt.system is not None:
                doc["system"] = prompt.system
            doc["prompt_template"] = prompt.template
            configs[name] = ConfigPlan(doc, prompt.index, prov.index if providers else None,
                                       prov.pid, prov.given_label)
    return configs


def _name(prompt: str, provider: str, n_prompts: int, n_providers: int) -> str:
    if n_prompts == 1 and n_providers == 1:
        return "default"
    if n_providers == 1:
        return prompt
    if n_prompts == 1:
        return provider or prompt
    return f"{prompt}-{provider}" if provider else prompt
