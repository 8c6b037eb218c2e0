"""`smevals import inspect FILE DIR [--scorer S] [--solver S] [--system TEXT]`: an Eval from an
Inspect dataset (CSV, JSON or JSONL samples with `input`, `target`, `id`, `metadata`,
`choices`) and the task's scorer.

One Task per sample in `tasks/<stem>.jsonl`: a text `input` becomes `prompt`, a chat
`input` the Task's `messages` (roles and text kept; images as OpenAI image parts), `target`
the grading key `expected` (a list stays a list), `id` the Task name (made a valid, unique
name), `metadata` and `choices` Task keys. With multiple_choice() (implied by choice()) the
prompt is the question, its lettered choices and the answer form Inspect asks for.
`configs/default.yaml` is a `smevals:openai` stub (`system` from --system); the grader's one
Check is the scorer's counterpart (inspect_scoring.py), applied to the samples with a target.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from smevals.importers.common import new_eval_folder, write_eval
from smevals.importers.inspect_scoring import Scoring, choice_prompt, multiple_choice, scoring
from smevals.importers.pf_source import ImportInputError, csv_rows, load_json, read_text

RESERVED = frozenset({"name", "prompt", "messages", "grading", "id"})
NOT_IMPORTED = ("sandbox", "files", "setup")
CONFIG = ("# A stub: give the model (or pass -m MODEL) and, for a server other than OpenAI,\n"
          "# base_url (docs/runners.md, smevals:openai).\n"
          "runner: smevals:openai\n")


@dataclass
class InspectImport:
    eval_dir: Path
    data_file: str
    scorer: Scoring
    tasks: int = 0
    renamed: int = 0
    chat: int = 0
    without_target: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)
    parts: int = 0               # content parts that are neither text nor images, left out


def import_inspect(source: Path, target: Path, scorer: str = "includes()",
                   solver: str | None = None, system: str | None = None) -> InspectImport:
    new_eval_folder(target)
    scored = multiple_choice(solver, scoring(scorer))
    if not source.is_file():
        raise ImportInputError(f"{source}: no such file")
    samples = _read(source)
    if not samples:
        raise ImportInputError(f"{source}: no samples")
    stem = _name(source.stem) or "samples"
    done = InspectImport(target, f"tasks/{stem}.jsonl", scored)
    rows = _rows(samples, stem, done)
    config = CONFIG + (yaml.safe_dump({"system": system}, allow_unicode=True, width=100)
                       if system else "")
    grader = {"description": f"Inspect's {scorer.strip()}" + (
        "" if scored.exact else f" (not exactly: {scored.why})"), "checks": [scored.check]}
    files = {"eval.yaml": yaml.safe_dump({"description": f"Imported from the Inspect dataset "
                                          f"{source.name}"}, sort_keys=False),
             done.data_file: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
             "configs/default.yaml": config,
             "graders/default.yaml": yaml.safe_dump(grader, sort_keys=False, width=100,
                                                    allow_unicode=True),
             "README.md": readme(source, scorer, done)}
    done.tasks = len(rows)
    write_eval(target, files)
    return done


def _read(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(file:line, sample) pairs."""
    text = read_text(path, str(path))
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        return list(csv_rows(path, text, "\t" if suffix == ".tsv" else ","))
    if suffix == ".jsonl":
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                out.append((f"{path}:{n}", _object(load_json(line, f"{path}:{n}"), f"{path}:{n}")))
        return out
    if suffix == ".json":
        doc = load_json(text, str(path))
        if not isinstance(doc, list):
            raise ImportInputError(f"{path}:1: a JSON dataset must be a list of samples")
        return [(f"{path} (sample {i})", _object(s, f"{path} (sample {i})"))
                for i, s in enumerate(doc, 1)]
    raise ImportInputError(f"{path}: not a dataset file: give a .csv, .tsv, .json or .jsonl")


def _object(doc: object, where: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise ImportInputError(f"{where}: a sample must be a JSON object")
    return doc


def _rows(samples: list[tuple[str, dict[str, Any]]], stem: str, done: InspectImport
          ) -> list[dict[str, Any]]:
    used: set[str] = set()
    rows = []
    for n, (where, sample) in enumerate(samples, 1):
        if "input" not in sample:
            raise ImportInputError(f"{where}: the sample has no `input`")
        row: dict[str, Any] = {"name": _unique(sample.get("id"), f"{stem}-{n}", used, done)}
        row.update(_input(sample["input"], where, done))
        for key, value in sample.items():
            if key in ("input", "target", "id"):
                continue
            if key == "metadata" and isinstance(value, dict):
                row.update({(f"metadata_{k}" if k in RESERVED or k in row else k): v
                            for k, v in value.items()})
            elif key in NOT_IMPORTED:
                done.dropped[key] = done.dropped.get(key, 0) + 1
            else:
                row[f"metadata_{key}" if key in RESERVED else key] = value
        if done.scorer.multiple_choice:
            _ask_choices(row, sample, where, done)
        target = sample.get("target")
        if target in (None, "", []):
            done.without_target.append(f"{row['name']} ({where})")
        else:
            row["grading"] = {"expected": target}
        rows.append(row)
    return rows


def _input(value: object, where: str, done: InspectImport) -> dict[str, Any]:
    if isinstance(value, str):
        return {"prompt": value}
    if isinstance(value, list) and value and all(
            isinstance(m, dict) and isinstance(m.get("role"), str) for m in value):
        messages = [_message(m, where, done) for m in value]
        if any(m["role"] == "user" for m in messages):
            done.chat += 1
            return {"messages": messages}
    raise ImportInputError(f"{where}: input: expected a string or a list of chat messages "
                           "(each with a role) with at least one user message")


def _message(message: dict[str, Any], where: str, done: InspectImport) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str):
        return {"role": message["role"], "content": content}
    if not isinstance(content, list):
        raise ImportInputError(f"{where}: input: a message's content must be text or a list "
                               "of content parts")
    parts = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "text" and isinstance(
                part.get("text"), str):
            parts.append({"type": "text", "text": part["text"]})
        elif isinstance(part, dict) and part.get("type") == "image" and isinstance(
                part.get("image"), str):
            parts.append({"type": "image_url", "image_url": {"url": part["image"]}})
        else:
            done.parts += 1
    return {"role": message["role"], "content": parts}


def _ask_choices(row: dict[str, Any], sample: dict[str, Any], where: str,
                 done: InspectImport) -> None:
    """multiple_choice(): the question (the last user message) with its lettered choices."""
    choices = sample.get("choices")
    if not isinstance(choices, list) or not choices:
        raise ImportInputError(f"{where}: choices: multiple_choice() needs a list of choices")
    scored = done.scorer
    if "prompt" in row:
        row["question"] = row["prompt"]
        row["prompt"] = choice_prompt(row["prompt"], choices, scored.multiple_correct,
                                      scored.cot)
        return
    last = [m for m in row["messages"] if m["role"] == "user"][-1]
    if not isinstance(last["content"], str):
        raise ImportInputError(f"{where}: input: multiple_choice() needs the last user message "
                               "as text")
    last["content"] = choice_prompt(last["content"], choices, scored.multiple_correct,
                                    scored.cot)


def _name(text: str) -> str:
    """A valid Task name: no `/`, `\\` or control characters, no white space at the ends,
    at most 200 characters, not `.` or `..`."""
    name = re.sub(r"[/\\\x00-\x1f\x7f]+", "_", text).strip()[:200].strip()
    return "" if name in (".", "..") else name


def _unique(raw: object, fallback: str, used: set[str], done: InspectImport) -> str:
    given = "" if raw is None or isinstance(raw, bool) else str(raw)
    name = _name(given) or fallback
    base, n = name, 2
    while name in used:
        name, n = f"{base[:190]}-{n}", n + 1
    if given and name != given:
        done.renamed += 1
    used.add(name)
    return name


def notes(done: InspectImport, scorer: str) -> list[str]:
    """What the import says beside its first line (the console's and README's lists)."""
    out = [f"scorer {scorer.strip()}: " + ("kept exactly (the Check "
           f"'{done.scorer.check['checker']}' decides as Inspect 0.3.285's scorer)"
           if done.scorer.exact else f"kept by another rule: {done.scorer.why}")]
    if done.scorer.multiple_choice:
        out.append("multiple_choice(): each prompt is the question, its lettered choices and "
                   "the answer form Inspect asks for (in smevals' words)")
    if done.chat:
        out.append(f"{done.chat} chat input(s) kept as messages")
    if done.parts:
        out.append(f"{done.parts} content part(s) neither text nor image: not imported")
    if done.renamed:
        out.append(f"{done.renamed} id(s) changed to be valid, unique Task names")
    if done.without_target:
        shown = ", ".join(done.without_target[:5]) + (
            f" and {len(done.without_target) - 5} more" if len(done.without_target) > 5 else "")
        out.append(f"{len(done.without_target)} sample(s) without a target: no Check applies, "
                   f"their Grades are errors ('no Check applied'): {shown}")
    out += [f"{count} sample(s) with `{key}`: not imported" for key, count in
            sorted(done.dropped.items())]
    return out


def readme(source: Path, scorer: str, done: InspectImport) -> str:
    lines = [f"# Imported from {source.name}", "",
             f"`smevals import inspect` made one Task per sample (`{done.data_file}`), a "
             "Config stub (`configs/default.yaml`: give it a model) and a grader "
             "(`graders/default.yaml`).", ""]
    lines += [f"- {line}" for line in notes(done, scorer)]
    if len(done.without_target) > 5:
        lines += ["", "## Samples without a target", ""]
        lines += [f"- {name}" for name in done.without_target]
    return "\n".join(lines) + "\n"
