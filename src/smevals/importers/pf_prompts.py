"""promptfoo `prompts` → prompt templates, by promptfoo 0.121's own rules.

A prompt that looks like a path (promptfoo's test: `file://`, a known extension, a `/`, `*`,
`\\`, or a dot three or four characters from the end) names files: a glob expands (no match:
the text itself is the prompt), `.txt` splits at lines that are `---`, `.md` and `.j2` are
one prompt each, `.jsonl` one per line, `.json` and `.yaml` one prompt (their JSON). Any
prompt whose text is a JSON list of chat messages (or YAML starting with `- role:`) is a
chat prompt: its messages are kept as messages. Every file read is inside the config's
folder (exit 2 otherwise).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from smevals.importers.pf_source import (
    ImportInputError,
    Source,
    convert_template,
    has_magic,
    load_yaml_lines,
    read_text,
    short,
    split_ref,
)

PATH_SUFFIXES = (".cjs", ".cts", ".j2", ".js", ".json", ".jsonl", ".md", ".mjs", ".mts",
                 ".py", ".ts", ".txt", ".yml", ".yaml")
FUNCTION_SUFFIXES = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".py")


@dataclass
class Prompt:
    label: str
    template: str | list[dict[str, Any]]     # text, or chat messages
    system: str | None = None
    index: int = 0            # its place in promptfoo's list of prompts (promptIdx)


def looks_like_path(text: str) -> bool:
    """promptfoo's maybeFilePath: whether a prompt string is read as a file path."""
    if "\n" in text or any(s in text for s in ("portkey://", "langfuse://", "helicone://")):
        return False
    tokens = text.split(":")
    last, before = tokens[-1], tokens[-2] if len(tokens) > 1 else ""
    return (text.startswith("file://") or any(last.endswith(s) or before.endswith(s)
                                               for s in PATH_SUFFIXES)
            or text[-3:-2] == "." or text[-4:-3] == "." or any(c in text for c in "*/\\"))


def read_prompts(src: Source) -> list[Prompt]:
    raw = src.data.get("prompts")
    if raw is None:
        return [Prompt("prompt", "{{task.prompt}}")]
    entries: list[tuple[Any, str | None, str]] = []
    if isinstance(raw, str):
        entries.append((raw, None, src.key_where(src.data, "prompts")))
    elif isinstance(raw, list):
        entries += [(item, None, src.where(raw, i)) for i, item in enumerate(raw)]
    elif isinstance(raw, dict):
        entries += [(key, str(label), src.key_where(raw, key)) for key, label in raw.items()]
    else:
        raise ImportInputError(f"{src.where(src.data)}: prompts: expected a string, a list or "
                               "a mapping")
    out: list[Prompt] = []
    position = 0
    for item, label, where in entries:
        got = _prompt(src, item, label, where)
        for prompt in got:
            prompt.index, position = position, position + 1
        position += not got         # a prompt left out (a function) keeps its place
        out.extend(got)
    return _unique(out)


def _prompt(src: Source, item: object, label: str | None, where: str) -> list[Prompt]:
    if isinstance(item, dict):
        text = item.get("raw") if isinstance(item.get("raw"), str) else item.get("id")
        label = str(item.get("label") or label or "") or None
        for key in item:
            if key not in ("raw", "id", "label"):
                src.skip(where, f"prompt {key}", "a prompt's own provider options (config) "
                         "and other keys have no counterpart: the request sent may differ"
                         if key == "config" else "no counterpart")
        if not isinstance(text, str):
            src.skip(where, "prompt", "a prompt object without `raw` or `id` text")
            return []
        item = text
    if not isinstance(item, str):
        src.skip(where, f"prompt {short(item)}", "not a string")
        return []
    if item.startswith("exec:"):
        src.skip(where, f"prompt {short(item)}", "an exec: prompt (a program) has no "
                 "counterpart")
        return []
    if not looks_like_path(item):
        return _from_text(src, item, label or "", where, where)
    return _from_path(src, item, label, where)


def _from_path(src: Source, item: str, label: str | None, where: str) -> list[Prompt]:
    rel, function = split_ref(item)
    if has_magic(rel) or (src.path.parent / rel).is_dir():
        pattern = rel + "/*" if (src.path.parent / rel).is_dir() else rel
        files = src.glob(pattern, where, "prompts")
        if not files:           # promptfoo: no file matches, so the text is the prompt
            return _from_text(src, item, label or "", where, where)
        return [p for f in files for p in _from_file(src, f, label, function, where)]
    (path,) = src.resolve(item, where, "prompts")
    return _from_file(src, path, label, function, where)


def _from_file(src: Source, path: Path, label: str | None, function: str | None,
               where: str) -> list[Prompt]:
    suffix = path.suffix.lower()
    shown = str(path)
    if function is not None or suffix in FUNCTION_SUFFIXES:
        src.skip(where, f"prompt file {path.name}", "a prompt function (JavaScript, Python, "
                 "...) has no counterpart")
        return []
    if suffix in (".json", ".yaml", ".yml"):
        return _structured(src, path, label, where)
    text = read_text(path, where)
    stem = label or path.stem
    if suffix == ".txt":
        parts = _split_txt(text)
    elif suffix == ".jsonl":
        parts = [line for line in re.split(r"\r?\n", text) if line]
    elif suffix in (".md", ".j2"):
        parts = [text]
    else:
        src.skip(where, f"prompt file {path.name}", "only .txt, .md, .j2, .json, .jsonl and "
                 ".yaml prompt files have a counterpart")
        return []
    out = []
    for i, part in enumerate(parts, 1):
        name = stem if len(parts) == 1 else f"{stem}-{i}"
        out += _from_text(src, part, name, f"{shown}", where)
    return out


def _split_txt(text: str) -> list[str]:
    """promptfoo's .txt prompts: split at lines that are `---` (spaces around allowed), each
    part trimmed; empty parts dropped."""
    parts: list[str] = []
    buffer: list[str] = []
    for line in re.split(r"\r?\n", text):
        if line.strip() == "---":
            parts.append("\n".join(buffer).strip())
            buffer = []
        else:
            buffer.append(line)
    parts.append("\n".join(buffer).strip())
    return [p for p in parts if p]


def _structured(src: Source, path: Path, label: str | None, where: str) -> list[Prompt]:
    """A .json or .yaml prompt file: its JSON is the prompt (chat messages, usually)."""
    if path.suffix.lower() == ".json":
        text = read_text(path, where)
        try:
            doc: Any = json.loads(text)
        except ValueError:
            return _from_text(src, text, label or path.stem, str(path), where)
    else:
        doc = load_yaml_lines(path, where)[0]
    return _from_doc(src, doc, label or path.stem, str(path), where)


def _from_text(src: Source, text: str, label: str, at: str, where: str) -> list[Prompt]:
    """One prompt's text: chat messages when it is JSON (or `- role:` YAML) of them."""
    stripped = text.strip()
    if stripped.startswith("- role:"):
        try:
            return _from_doc(src, _yaml(stripped), label, at, where)
        except ValueError:
            pass
    try:
        doc = json.loads(text)
    except ValueError:
        return [Prompt(label, convert_template(text, at, src))]
    return _from_doc(src, doc, label, at, where)


def _yaml(text: str) -> Any:
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def _from_doc(src: Source, doc: object, label: str, at: str, where: str) -> list[Prompt]:
    if not (isinstance(doc, list) and doc and all(
            isinstance(m, dict) and isinstance(m.get("role"), str) for m in doc)):
        src.skip(at, f"prompt {short(doc)}", "a JSON prompt that is not a list of chat "
                 "messages (each with a role) has no counterpart")
        return []
    messages = [_message(src, m, at) for m in doc]
    return [Prompt(label, messages)]


def _message(src: Source, message: dict[str, Any], at: str) -> dict[str, Any]:
    """A chat message with promptfoo's `{{var}}` placeholders in its text made smevals'."""
    out = dict(message)
    content = message.get("content")
    if isinstance(content, str):
        out["content"] = convert_template(content, at, src)
    elif isinstance(content, list):
        out["content"] = [{**p, "text": convert_template(p["text"], at, src)}
                          if isinstance(p, dict) and isinstance(p.get("text"), str) else p
                          for p in content]
    return out


def safe_name(text: str) -> str:
    name = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")
    return name[:60].strip("-.") or "x"


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
