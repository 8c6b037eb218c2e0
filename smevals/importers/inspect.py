"""`smevals import inspect FILE DIR`: an Eval from an Inspect dataset (CSV, JSON or JSONL
samples with `input`, `target`, `id`, `metadata`, `choices`).

One Task per sample in `tasks/<stem>.jsonl`: `input` becomes `prompt` (a list of chat
messages: the user messages' text, in order, joined by a blank line), `target` the grading
key `expected` (a list stays a list), `id` the Task name (made a valid, unique name),
`metadata` and `choices` Task keys. `configs/default.yaml` is a `smevals:openai` stub;
`graders/default.yaml` checks that the output contains the target (case-insensitive).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from smevals.importers.common import new_eval_folder, write_eval
from smevals.importers.pf_source import (
    ImportInputError,
    csv_rows,
    load_json,
    read_text,
)

RESERVED = frozenset({"name", "prompt", "messages", "grading", "id"})
NOT_IMPORTED = ("sandbox", "files", "setup")
GRADER = {
    "description": "The output contains the sample's target (case-insensitive; a list target: "
                   "every item)",
    "checks": [{"checker": "contains", "value": {"task": "expected"}, "case_sensitive": False,
                "if_task_has": "expected"}],
}
CONFIG = ("# A stub: give the model (or pass -m MODEL) and, for a server other than OpenAI,\n"
          "# base_url (docs/runners.md, smevals:openai).\n"
          "runner: smevals:openai\n")


@dataclass
class InspectImport:
    eval_dir: Path
    data_file: str
    tasks: int = 0
    renamed: int = 0
    chat: int = 0
    without_target: int = 0
    dropped: dict[str, int] = field(default_factory=dict)


def import_inspect(source: Path, target: Path) -> InspectImport:
    new_eval_folder(target)
    if not source.is_file():
        raise ImportInputError(f"{source}: no such file")
    samples = _read(source)
    if not samples:
        raise ImportInputError(f"{source}: no samples")
    stem = _name(source.stem) or "samples"
    done = InspectImport(target, f"tasks/{stem}.jsonl")
    rows = _rows(samples, stem, done)
    files = {"eval.yaml": yaml.safe_dump({"description": f"Imported from the Inspect dataset "
                                          f"{source.name}"}, sort_keys=False),
             done.data_file: "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
             "configs/default.yaml": CONFIG,
             "graders/default.yaml": yaml.safe_dump(GRADER, sort_keys=False, width=100)}
    write_eval(target, files)
    done.tasks = len(rows)
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


def _object(doc: Any, where: str) -> dict[str, Any]:
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
        row["prompt"] = _prompt(sample["input"], where, done)
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
        target = sample.get("target")
        if target in (None, "", []):
            done.without_target += 1
        else:
            row["grading"] = {"expected": target}
        rows.append(row)
    return rows


def _prompt(value: Any, where: str, done: InspectImport) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(m, dict) for m in value):
        texts = [_text(m.get("content")) for m in value if m.get("role") == "user"]
        if texts and all(t is not None for t in texts):
            done.chat += 1
            return "\n\n".join(t for t in texts if t is not None)
    raise ImportInputError(f"{where}: input: expected a string or a list of chat messages "
                           "with at least one user message whose content is text")


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):          # content parts: keep the text ones
        parts = [str(p["text"]) for p in content if isinstance(p, dict) and p.get("type") ==
                 "text" and isinstance(p.get("text"), str)]
        return "\n".join(parts) if parts else None
    return None


def _name(text: str) -> str:
    """A valid Task name: no `/`, `\\` or control characters, no white space at the ends,
    at most 200 characters, not `.` or `..`."""
    name = re.sub(r"[/\\\x00-\x1f\x7f]+", "_", text).strip()[:200].strip()
    return "" if name in (".", "..") else name


def _unique(raw: Any, fallback: str, used: set[str], done: InspectImport) -> str:
    given = "" if raw is None or isinstance(raw, bool) else str(raw)
    name = _name(given) or fallback
    base, n = name, 2
    while name in used:
        name, n = f"{base[:190]}-{n}", n + 1
    if given and name != given:
        done.renamed += 1
    used.add(name)
    return name
