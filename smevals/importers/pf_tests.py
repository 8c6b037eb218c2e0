"""promptfoo `tests` (inline, or CSV/JSONL/JSON/YAML files) and `defaultTest` → test cases."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from smevals.importers.pf_source import (
    ImportInputError,
    Source,
    csv_rows,
    load_json,
    load_yaml_lines,
    read_text,
)

SHORTHAND = re.compile(r"^(not-)?([a-z][a-z-]*)(?:\(([\d.]+)\))?(?::(.*))?$", re.S)
SHORT_TYPES = frozenset({
    "equals", "contains", "icontains", "contains-any", "icontains-any", "contains-all",
    "icontains-all", "regex", "starts-with", "is-json", "contains-json", "levenshtein",
    "rouge-n", "bleu", "llm-rubric", "model-graded-closedqa", "factuality", "answer-relevance",
    "similar", "javascript", "python", "webhook", "grade", "fn", "eval", "latency", "cost",
    "is-valid-openai-tools-call", "is-valid-openai-function-call", "select-best",
})
ALIASES = {"grade": "llm-rubric", "fn": "javascript", "eval": "javascript"}


@dataclass
class Assertion:
    doc: dict[str, Any]
    where: str


@dataclass
class Case:
    vars: dict[str, Any]
    asserts: list[Assertion]
    where: str
    description: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


def shorthand(text: str, where: str) -> Assertion:
    """A CSV `__expected` cell: `icontains: bonjour`, `grade: ...`, `rouge-n(0.8): ...`,
    else the value the output must equal."""
    m = SHORTHAND.match(text)
    if m and (m.group(2) in SHORT_TYPES) and (m.group(4) is not None or m.group(2) in (
            "is-json", "contains-json", "is-valid-openai-tools-call")):
        kind = (m.group(1) or "") + ALIASES.get(m.group(2), m.group(2))
        doc: dict[str, Any] = {"type": kind}
        if m.group(4) is not None:
            doc["value"] = m.group(4).strip()
        if m.group(3):
            doc["threshold"] = float(m.group(3))
        return Assertion(doc, where)
    return Assertion({"type": "equals", "value": text}, where)


def read_tests(src: Source) -> list[Case]:
    raw = src.data.get("tests")
    if raw is None:
        return []
    where = src.where(src.data)
    if isinstance(raw, str):
        return _tests_ref(src, raw, where)
    if not isinstance(raw, list):
        raise ImportInputError(f"{where}: tests: expected a list or a file:// reference")
    out: list[Case] = []
    for i, item in enumerate(raw):
        at = src.where(raw, i)
        if isinstance(item, str):
            out.extend(_tests_ref(src, item, at))
        elif isinstance(item, dict):
            out.append(_case(src, item, at))
        else:
            raise ImportInputError(f"{at}: tests[{i}]: expected a mapping")
    return out


def _tests_ref(src: Source, ref: str, where: str) -> list[Case]:
    if not ref.startswith("file://"):
        raise ImportInputError(f"{where}: tests: {ref!r} is not a file:// reference")
    out: list[Case] = []
    for path in src.resolve(ref, where):
        suffix = path.suffix.lower()
        if suffix in (".csv", ".tsv"):
            out.extend(_csv(src, path, where, "\t" if suffix == ".tsv" else ","))
        elif suffix == ".jsonl":
            out.extend(_jsonl(src, path, where))
        elif suffix in (".json", ".yaml", ".yml"):
            out.extend(_doc_file(src, path, where))
        else:
            src.skip(where, f"tests file {path.name}", "only CSV, TSV, JSONL, JSON and YAML "
                     "test files have a counterpart")
    return out


def _csv(src: Source, path: Path, where: str, delim: str) -> list[Case]:
    rows = csv_rows(path, read_text(path, where), delim, strip_names=True)
    return [_csv_case(src, row, at) for at, row in rows]


def _csv_case(src: Source, row: dict[str, str], at: str) -> Case:
    case = Case({}, [], at)
    for key, cell in row.items():
        if key.startswith("__expected"):
            if cell.strip():
                case.asserts.append(shorthand(cell, at))
        elif key == "__description":
            case.description = cell
        elif key.startswith("__metadata:"):
            name = key[len("__metadata:"):]
            case.metadata[name.removesuffix("[]")] = [p.replace("\\,", ",") for p in re.split(
                r"(?<!\\),", cell)] if name.endswith("[]") else cell
        elif key.startswith("__"):
            if cell.strip():
                src.skip(at, f"column {key}", "no counterpart")
        else:
            case.vars[key] = cell
    return case


def _jsonl(src: Source, path: Path, where: str) -> list[Case]:
    out: list[Case] = []
    for n, line in enumerate(read_text(path, where).splitlines(), 1):
        if not line.strip():
            continue
        doc = load_json(line, f"{path}:{n}")
        if not isinstance(doc, dict):
            raise ImportInputError(f"{path}:{n}: each line must be a JSON object")
        out.append(_case(src, doc if "vars" in doc or "assert" in doc else {"vars": doc},
                         f"{path}:{n}"))
    return out


def _doc_file(src: Source, path: Path, where: str) -> list[Case]:
    data, lines, items = load_yaml_lines(path, where)
    if not isinstance(data, list):
        raise ImportInputError(f"{path}:1: a tests file must hold a list of tests")
    sub = Source(path, {}, lines, items, src.skipped)
    out = []
    for i, item in enumerate(data):
        at = sub.where(data, i)
        if not isinstance(item, dict):
            raise ImportInputError(f"{at}: each test must be a mapping")
        out.append(_case(sub, item, at))
    return out


CASE_KEYS = ("vars", "assert", "description", "metadata")
KEY_WHY = {"options": "no counterpart (a transform has none; a grading provider is the "
                      "grader's judge block)",
           "threshold": "a per-test pass mark has no counterpart (the grader's "
                        "scoring.pass_threshold applies to every Task)"}


def _case(src: Source, doc: dict[str, Any], at: str) -> Case:
    vars_ = doc.get("vars") or {}
    if isinstance(vars_, str) or not isinstance(vars_, dict):
        src.skip(at, "vars", "vars from a file are not read")
        vars_ = {}
    for key, value in vars_.items():
        if isinstance(value, str) and value.startswith("file://"):
            src.skip(at, f"var {key}", "a file:// var is kept as its reference, not read")
        elif isinstance(value, list):
            src.skip(at, f"var {key}", "promptfoo makes one test per item of a list var; "
                     "smevals keeps one Task with the list")
    case = Case(dict(vars_), [], at, doc.get("description") if isinstance(
        doc.get("description"), str) else None,
        doc["metadata"] if isinstance(doc.get("metadata"), dict) else {})
    asserts = doc.get("assert") or []
    for j, a in enumerate(asserts if isinstance(asserts, list) else []):
        case.asserts.append(Assertion(a, src.where(asserts, j)))
    for key in doc:
        if key not in CASE_KEYS:
            src.skip(src.key_where(doc, key), f"test key {key}", KEY_WHY.get(key, "no "
                     "counterpart"))
    return case


def default_test(src: Source) -> Case | None:
    doc = src.data.get("defaultTest")
    if doc is None:
        return None
    where = src.where(src.data)
    if not isinstance(doc, dict):
        src.skip(where, "defaultTest", "a defaultTest file is not read")
        return None
    return _case(src, doc, src.where(doc))
