"""promptfoo `tests` (inline, or CSV/JSONL/JSON/YAML files) and `defaultTest` → test cases,
expanded as promptfoo expands them: a var holding a list of strings (or a `file://` glob)
makes one test per value, every combination, in order."""

from __future__ import annotations

import json
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
    short,
)

_TYPE_WORDS = (
    "agent-rubric answer-relevance bleu classifier contains contains-all contains-any "
    "contains-html contains-json contains-sql contains-xml context-faithfulness context-recall "
    "context-relevance conversation-relevance cost equals factuality finish-reason g-eval gleu "
    "guardrails icontains icontains-all icontains-any is-html is-json is-refusal is-sql "
    "is-valid-function-call is-valid-openai-function-call is-valid-openai-tools-call is-xml "
    "javascript latency levenshtein llm-rubric pi meteor model-graded-closedqa "
    "model-graded-factuality moderation perplexity perplexity-score python regex rouge-n ruby "
    "similar similar:cosine similar:dot similar:euclidean starts-with tool-call-f1 skill-used "
    "trajectory:goal-success trajectory:tool-args-match trajectory:step-count "
    "trajectory:tool-sequence trajectory:tool-used trace-error-spans trace-span-count "
    "trace-span-duration search-rubric webhook word-count")
TYPES = _TYPE_WORDS.split()
SHORTHAND = re.compile(r"^(not-)?(" + "|".join(re.escape(t) for t in TYPES) +
                       r")(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$")
THRESHOLDED = frozenset({
    "answer-relevance", "classifier", "context-faithfulness", "context-recall",
    "context-relevance", "cost", "latency", "levenshtein", "perplexity-score", "perplexity",
    "rouge-n", "similar", "starts-with"})
SCRIPT_FILE = re.compile(r"\.(js|cjs|mjs|ts|cts|mts)$", re.I)


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
    changed: str = ""            # why promptfoo checks another output than the model's


def shorthand(cell: str, where: str) -> Assertion:
    """A CSV `__expected` cell as promptfoo reads it (`icontains: bonjour`, `grade: ...`,
    `rouge-n(0.8): ...`, `javascript: ...`, `file://check.py`), else the value to equal."""
    text = cell.strip()
    for prefix, kind in (("javascript:", "javascript"), ("fn:", "javascript"),
                         ("eval:", "javascript"), ("python:", "python")):
        if text.startswith(prefix):
            return Assertion({"type": kind, "value": text[len(prefix):].strip()}, where)
    if text.startswith("file://") and SCRIPT_FILE.search(text[7:]):
        return Assertion({"type": "javascript", "value": text}, where)
    if text.startswith("file://") and (text.endswith(".py") or ".py:" in text):
        return Assertion({"type": "python", "value": text[7:].strip()}, where)
    for prefix in ("grade:", "llm-rubric:"):
        if text.startswith(prefix):
            return Assertion({"type": "llm-rubric", "value": text[len(prefix):]}, where)
    m = SHORTHAND.match(text)
    if not m:
        return Assertion({"type": "equals", "value": text}, where)
    negate, kind, number, value = m.groups()
    doc: dict[str, Any] = {"type": (negate or "") + kind}
    if value is not None:
        doc["value"] = value if kind in ("contains-json", "is-json") or kind.endswith(
            ("-all", "-any")) else value.strip()
    if kind in THRESHOLDED:
        doc["threshold"] = float(number) if number else 0.75
    elif number:
        doc["threshold"] = float(number)
    return Assertion(doc, where)


def read_tests(src: Source) -> list[Case]:
    raw = src.data.get("tests")
    if raw is None:
        return []
    where = src.key_where(src.data, "tests")
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
    for path in src.resolve(ref, where, "tests"):
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


CSV_SKIPPED = {"__prefix": "a prompt prefix has no counterpart: the prompt sent differs",
               "__suffix": "a prompt suffix has no counterpart: the prompt sent differs",
               "__providerOutput": "a recorded output has no counterpart (record Runs with "
                                   "smevals:replay)",
               "__threshold": "a per-test pass mark has no counterpart (each assertion is "
                              "still checked)"}


def _csv_case(src: Source, row: dict[str, str], at: str) -> Case:
    case = Case({}, [], at)
    metric: str | None = None
    limits: dict[int, float] = {}
    for key, cell in row.items():
        if key.startswith("__expected"):
            if cell.strip():
                case.asserts.append(shorthand(cell, at))
        elif key == "__description":
            case.description = cell
        elif key == "__metric":
            metric = cell
        elif (m := CONFIG_COLUMN.fullmatch(key)) is not None:
            limits[int(m.group(1)) - 1 if m.group(1) else 0] = _number(cell, at, key)
        elif key.startswith("__metadata:"):
            _metadata(case, key[len("__metadata:"):], cell)
        elif key.startswith("__"):
            if cell.strip():
                src.skip(at, f"column {key}", CSV_SKIPPED.get(key, "no counterpart"))
        else:
            case.vars[key] = cell
    _apply(case, metric, limits)
    return case


def _apply(case: Case, metric: str | None, limits: dict[int, float]) -> None:
    """`__metric` names every assertion of the row, `__config:__expectedN:threshold` the
    Nth one's threshold."""
    for i, assertion in enumerate(case.asserts):
        if metric is not None:
            assertion.doc["metric"] = metric
        if i in limits:
            assertion.doc["threshold"] = limits[i]


CONFIG_COLUMN = re.compile(r"__config:__expected(\d*):threshold")


def _metadata(case: Case, name: str, cell: str) -> None:
    if not cell.strip():
        return
    if name.endswith("[]"):
        case.metadata[name[:-2]] = [p.strip().replace("\\,", ",")
                                    for p in re.split(r"(?<!\\),", cell)]
    else:
        case.metadata[name] = cell


def _number(cell: str, at: str, key: str) -> float:
    try:
        return float(cell)
    except ValueError:
        raise ImportInputError(f"{at}: {key}: {cell!r} is not a number") from None


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
    sub = Source(path, {}, lines, items, src.skipped, root=src.root)
    out = []
    for i, item in enumerate(data):
        at = sub.where(data, i)
        if not isinstance(item, dict):
            raise ImportInputError(f"{at}: each test must be a mapping")
        out.append(_case(sub, item, at))
    return out


CASE_KEYS = ("vars", "assert", "description", "metadata", "options")
KEY_WHY = {"threshold": "a per-test pass mark has no counterpart (each assertion is still "
                        "checked)"}
OUTPUT_OPTIONS = ("transform", "postprocess")


def _case(src: Source, doc: dict[str, Any], at: str) -> Case:
    vars_ = doc.get("vars") or {}
    if not isinstance(vars_, dict):
        src.skip(at, "vars", "vars from a file are not read")
        vars_ = {}
    case = Case(dict(vars_), [], at, doc.get("description") if isinstance(
        doc.get("description"), str) else None,
        doc["metadata"] if isinstance(doc.get("metadata"), dict) else {})
    asserts = doc.get("assert") or []
    for j, a in enumerate(asserts if isinstance(asserts, list) else []):
        case.asserts.append(Assertion(a, src.where(asserts, j)))
    options = doc.get("options")
    if isinstance(options, dict):
        _options(src, options, src.key_where(doc, "options"), case)
    for key in doc:
        if key not in CASE_KEYS:
            src.skip(src.key_where(doc, key), f"test key {key}", KEY_WHY.get(key, "no "
                     "counterpart"))
    return case


def _options(src: Source, options: dict[str, Any], where: str, case: Case) -> None:
    for key in options:
        if key in OUTPUT_OPTIONS:
            case.changed = f"the test's options.{key} changes the output promptfoo checks"
        elif key == "provider":
            src.skip(where, "test options.provider", "the grading model is the grader's "
                     "judge block (give it by hand)")
        else:
            src.skip(where, f"test options.{key}", "no counterpart")


def expand(src: Source, case: Case) -> list[Case]:
    """One Case per combination of list values (promptfoo's generateVarCombinations): a
    list whose first item is a string gives its items in turn, a `file://` var each file
    its glob names; the first var varies slowest."""
    combos: list[dict[str, Any]] = [{}]
    for key, value in case.vars.items():
        if isinstance(value, str) and value.startswith("file://"):
            files = src.resolve(value, case.where, f"vars.{key}")
            values: list[Any] = [f"file://{p.relative_to(src.base).as_posix()}"
                                 for p in files]
        elif isinstance(value, list) and value and isinstance(value[0], str):
            values = list(value)
        else:
            values = [value]
        combos = [{**c, key: v} for c in combos for v in values]
    if len(combos) == 1:
        case.vars = combos[0]
        return [case]
    return [Case(c, case.asserts, case.where, case.description, dict(case.metadata),
                 case.changed) for c in combos]


def var_value(src: Source, value: object, where: str, key: str) -> object:
    """A var's value as promptfoo renders it: a `file://` var is its file's text (trimmed;
    YAML as JSON), a string loses one trailing newline."""
    if isinstance(value, str) and value.startswith("file://"):
        path = src.resolve(value, where, f"vars.{key}")[0]
        suffix = path.suffix.lower()
        if suffix in (".py", ".js", ".cjs", ".mjs", ".ts") or suffix in (
                ".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf", ".mp3", ".wav", ".mp4"):
            src.skip(where, f"var {key} {short(path.name)}", "a var computed by a script or "
                     "read from a binary file is kept as its reference")
            return value
        text = read_text(path, where)
        if suffix in (".yaml", ".yml"):
            return json.dumps(load_yaml_lines(path, where)[0], ensure_ascii=False,
                              separators=(",", ":"))
        return text.strip()
    if isinstance(value, str) and value.endswith("\n"):
        return value[:-1]
    return value


def default_test(src: Source) -> Case | None:
    doc = src.data.get("defaultTest")
    if doc is None:
        return None
    where = src.key_where(src.data, "defaultTest")
    if not isinstance(doc, dict):
        src.skip(where, "defaultTest", "a defaultTest file is not read")
        return None
    return _case(src, doc, src.where(doc))
