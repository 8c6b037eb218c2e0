"""promptfoo `prompts` × `providers` → smevals Configs (`smevals:openai` runner, templates)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smevals.importers.pf_source import (
    ImportInputError,
    Source,
    convert_template,
    load_json,
    load_yaml_lines,
    read_text,
    short,
)

OLLAMA_URL = "http://localhost:11434/v1"
PARAMS = ("top_p", "seed", "stop", "presence_penalty", "frequency_penalty", "tools",
          "tool_choice", "response_format")


@dataclass
class Prompt:
    label: str
    template: str
    system: str | None = None


@dataclass
class Provider:
    label: str
    doc: dict[str, Any]
    prompts: list[str] | None      # the prompt labels this provider is limited to


def safe_name(text: str) -> str:
    name = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")
    return name[:60].strip("-.") or "x"


def read_prompts(src: Source) -> list[Prompt]:
    raw = src.data.get("prompts")
    if raw is None:
        return [Prompt("prompt", "{{task.prompt}}")]
    entries: list[tuple[Any, str | None, str]] = []
    if isinstance(raw, str):
        entries.append((raw, None, src.where(src.data)))
    elif isinstance(raw, list):
        entries += [(item, None, src.where(raw, i)) for i, item in enumerate(raw)]
    elif isinstance(raw, dict):
        entries += [(key, str(label), src.where(raw)) for key, label in raw.items()]
    else:
        raise ImportInputError(f"{src.where(src.data)}: prompts: expected a string, a list or "
                               "a mapping")
    out: list[Prompt] = []
    for item, label, where in entries:
        out.extend(_prompt(src, item, label, where))
    return _unique(out)


def _prompt(src: Source, item: Any, label: str | None, where: str) -> list[Prompt]:
    if isinstance(item, dict):
        text = item.get("raw") if isinstance(item.get("raw"), str) else item.get("id")
        label = str(item.get("label") or label or "") or None
        if not isinstance(text, str):
            src.skip(where, "prompt", "a prompt object without `raw` or `id` text")
            return []
        item = text
    if not isinstance(item, str):
        src.skip(where, f"prompt {short(item)}", "not a string")
        return []
    if not item.startswith("file://"):
        return [Prompt(label or "", convert_template(item, where, src))]
    out: list[Prompt] = []
    for path in src.resolve(item, where):
        out.extend(_prompt_file(src, path, label, where))
    return out


def _prompt_file(src: Source, path: Path, label: str | None, where: str) -> list[Prompt]:
    suffix = path.suffix.lower()
    if suffix in (".json", ".yaml", ".yml"):
        return _chat_file(src, path, label, where)
    if suffix not in (".txt", ".md", ".j2", ".nunjucks", ".njk", ""):
        src.skip(where, f"prompt file {path.name}", "a prompt function (JavaScript, Python, "
                 "...) has no counterpart")
        return []
    text = read_text(path, where)
    parts = [p.strip("\n") for p in re.split(r"^---$", text, flags=re.M)]
    parts = [p for p in parts if p.strip()]
    stem = label or path.stem
    return [Prompt(stem if len(parts) == 1 else f"{stem}-{i}",
                   convert_template(p, f"{path}", src)) for i, p in enumerate(parts, 1)]


def _chat_file(src: Source, path: Path, label: str | None, where: str) -> list[Prompt]:
    """A chat prompt (a list of messages): a system message and one user message become
    `system` and `prompt_template`; anything else is reported."""
    if path.suffix.lower() == ".json":
        doc = load_json(read_text(path, where), str(path))
    else:
        doc = load_yaml_lines(path, where)[0]
    msgs = doc if isinstance(doc, list) else None
    roles = [m.get("role") for m in msgs if isinstance(m, dict)] if msgs else []
    if not msgs or roles not in (["user"], ["system", "user"]) or not all(
            isinstance(m.get("content"), str) for m in msgs):
        src.skip(f"{path}", "chat prompt", "only a user message (after an optional system "
                 "message) has a counterpart (prompt_template and system)")
        return []
    system = convert_template(msgs[0]["content"], str(path), src) if len(msgs) == 2 else None
    return [Prompt(label or path.stem, convert_template(msgs[-1]["content"], str(path), src),
                   system)]


def _unique(prompts: list[Prompt]) -> list[Prompt]:
    seen: set[str] = set()
    for i, p in enumerate(prompts, 1):
        name = safe_name(p.label) if p.label else f"prompt{i}"
        base, n = name, 2
        while name in seen:
            name, n = f"{base}-{n}", n + 1
        seen.add(name)
        p.label = name
    return prompts


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
            out.append(provider)
    seen: set[str] = set()
    for p in out:
        base, n = p.label, 2
        while p.label in seen:
            p.label, n = f"{base}-{n}", n + 1
        seen.add(p.label)
    return out


def _provider(src: Source, item: Any, where: str) -> Provider | None:
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
                  ) -> dict[str, dict[str, Any]]:
    """Config name → Config document: one per prompt × provider (a provider's `prompts`
    limits it). One of each is `default`; with one side single, the other side's name."""
    configs: dict[str, dict[str, Any]] = {}
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
            configs[name] = doc
    return configs


def _name(prompt: str, provider: str, n_prompts: int, n_providers: int) -> str:
    if n_prompts == 1 and n_providers == 1:
        return "default"
    if n_providers == 1:
        return prompt
    if n_prompts == 1:
        return provider or prompt
    return f"{prompt}-{provider}" if provider else prompt
