"""`smevals import promptfoo CONFIG DIR`: an Eval from a promptfoo config.

prompts × providers → Configs (`prompt_template`, the `smevals:openai` runner); tests →
`tasks/tests.jsonl` (vars as Task keys, assertion values as grading keys); assertions →
built-in Checks in `graders/default.yaml` (a test's own assertion applies only to the Tasks
that carry its value, through `if_task_has`). What has no counterpart is listed, never
dropped: in the returned report and in the Eval's README.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from smevals.importers.common import new_eval_folder, write_eval
from smevals.importers.pf_asserts import VALUE, check_for
from smevals.importers.pf_configs import config_matrix, read_prompts, read_providers
from smevals.importers.pf_source import (
    ImportInputError,
    Skipped,
    Source,
    key_for,
    load_config,
    render_vars,
    short,
)
from smevals.importers.pf_tests import Case, default_test, read_tests

TOP_KEYS = frozenset({"description", "prompts", "providers", "targets", "tests",
                      "defaultTest", "assertionTemplates"})
ASSERT_KEYS = frozenset({"type", "value", "threshold", "weight", "metric"})


@dataclass
class Grader:
    checks: list[dict[str, Any]] = field(default_factory=list)
    slots: dict[str, str] = field(default_factory=dict)      # signature → grading key
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class PromptfooImport:
    eval_dir: Path
    tasks: int
    configs: list[str]
    checks: int
    skipped: list[Skipped]


def import_promptfoo(config: Path, target: Path) -> PromptfooImport:
    new_eval_folder(target)
    src = load_config(config)
    for key in src.data:
        if key not in TOP_KEYS:
            src.skip(src.key_where(src.data, key), f"top-level key {key}", "no counterpart")
    prompts = read_prompts(src)
    providers = read_providers(src)
    configs = config_matrix(prompts, providers)
    cases = read_tests(src) or [Case({}, [], src.where(src.data))]
    default = default_test(src)
    grader = Grader()
    rows = [_row(i, case, default, grader, src) for i, case in enumerate(cases, 1)]
    if default is not None:
        for a in default.asserts:
            if not _needs_vars(a.doc):
                _literal_check(src, a.doc, a.where, grader)
    _fill_missing(rows, configs)
    files = _documents(src, configs, rows, grader)
    write_eval(target, files)
    return PromptfooImport(target, len(rows), list(configs), len(grader.checks), src.skipped)


def _needs_vars(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("value"), str) and "{{" in doc["value"]


def _row(i: int, case: Case, default: Case | None, grader: Grader, src: Source
         ) -> dict[str, Any]:
    vars_ = {**(default.vars if default else {}), **case.vars}
    row: dict[str, Any] = {"name": f"test-{i}"}
    row.update({key_for(k): v for k, v in vars_.items()})
    if case.description is not None and "description" not in row:
        row["description"] = case.description
    if case.metadata and "metadata" not in row:
        row["metadata"] = case.metadata
    grading: dict[str, Any] = {}
    asserts = case.asserts + [a for a in (default.asserts if default else [])
                              if _needs_vars(a.doc)]
    seen: dict[str, int] = {}
    for a in asserts:
        _task_check(src, a.doc, a.where, vars_, grader, grading, seen)
    if grading:
        row["grading"] = grading
    return row


def _assertion(src: Source, doc: Any, where: str) -> tuple[dict[str, Any], str] | None:
    if isinstance(doc, dict) and set(doc) == {"$ref"}:
        doc = _ref(src, doc["$ref"], where)
    if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
        src.skip(where, "assertion", "not a mapping with a `type`")
        return None
    kind = doc["type"]
    extra = [k for k in doc if k not in ASSERT_KEYS]
    if extra:
        src.skip(where, f"{kind} assertion", f"uses {', '.join(extra)}: no counterpart")
        return None
    return doc, kind


def _ref(src: Source, ref: Any, where: str) -> Any:
    """An assertion given as `$ref: '#/assertionTemplates/NAME'` (a path in this config)."""
    node: Any = src.data
    parts = ref[2:].split("/") if isinstance(ref, str) and ref.startswith("#/") else None
    for part in parts or ():
        node = node.get(part) if isinstance(node, dict) else None
    if parts is None or not isinstance(node, dict):
        raise ImportInputError(f"{where}: $ref {ref!r}: no such assertion in this config")
    return node


def _task_check(src: Source, doc: Any, where: str, vars_: dict[str, Any], grader: Grader,
                grading: dict[str, Any], seen: dict[str, int]) -> None:
    got = _assertion(src, doc, where)
    if got is None:
        return
    doc, kind = got
    opts, why, value = check_for(kind, render_vars(doc.get("value"), vars_),
                                 doc.get("threshold"))
    if opts is None:
        src.skip(where, f"{kind} assertion", why)
        return
    sig = json.dumps([kind, opts, doc.get("weight"), doc.get("metric")], default=str,
                     sort_keys=True)
    n = seen[sig] = seen.get(sig, 0) + 1
    key = grader.slots.get(f"{sig}#{n}")
    if key is None:
        base = kind.replace("-", "_")
        count = grader.counts[base] = grader.counts.get(base, 0) + 1
        key = grader.slots[f"{sig}#{n}"] = f"{base}_{count}"
        check = _fill(opts, {"task": key})
        check["if_task_has"] = key
        grader.checks.append(_extras(check, doc, kind))
    grading[key] = value


def _literal_check(src: Source, doc: Any, where: str, grader: Grader) -> None:
    got = _assertion(src, doc, where)
    if got is None:
        return
    doc, kind = got
    opts, why, value = check_for(kind, doc.get("value"), doc.get("threshold"))
    if opts is None:
        src.skip(where, f"{kind} assertion", why)
        return
    grader.checks.append(_extras(_fill(opts, value), doc, kind))


def _fill(opts: dict[str, Any], value: Any) -> dict[str, Any]:
    return {k: (value if v is VALUE else v) for k, v in opts.items()}


def _extras(check: dict[str, Any], doc: dict[str, Any], kind: str) -> dict[str, Any]:
    out = {"name": str(doc.get("metric") or kind), **check}
    if isinstance(doc.get("weight"), int | float) and doc["weight"] != 1:
        out["weight"] = doc["weight"]
    return out


def _fill_missing(rows: list[dict[str, Any]], configs: dict[str, dict[str, Any]]) -> None:
    """promptfoo renders a var a test lacks as empty text: give every Task the keys the
    templates use."""
    import re

    used = {m for doc in configs.values() for text in (doc.get("prompt_template"),
            doc.get("system")) if isinstance(text, str)
            for m in re.findall(r"(?<!\\)\{\{task\.([^}]+)\}\}", text)}
    for row in rows:
        for key in sorted(used - {"name"}):
            row.setdefault(key, "")


def _documents(src: Source, configs: dict[str, dict[str, Any]], rows: list[dict[str, Any]],
               grader: Grader) -> dict[str, str]:
    desc = src.data.get("description")
    files = {"eval.yaml": _yaml({"description": str(desc) if desc else
                                 f"Imported from the promptfoo config {src.path.name}"})}
    for name, doc in configs.items():
        files[f"configs/{name}.yaml"] = _yaml(doc)
    files["tasks/tests.jsonl"] = "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                         for r in rows)
    checks = grader.checks or [{"name": "no assertions", "checker": "regex",
                                "pattern": "(?s).*"}]
    files["graders/default.yaml"] = _yaml({"description": f"The assertions of "
                                           f"{src.path.name}", "checks": checks,
                                           "scoring": {"method": "weighted"}})
    files["README.md"] = readme(src, list(configs), len(rows), len(grader.checks))
    return files


def readme(src: Source, configs: list[str], tasks: int, checks: int) -> str:
    lines = [f"# Imported from {src.path.name}", "",
             f"`smevals import promptfoo` made {tasks} Task(s) (`tasks/tests.jsonl`), "
             f"{len(configs)} Config(s) ({', '.join(configs) or 'none'}) and a grader with "
             f"{checks} Check(s) (`graders/default.yaml`).", ""]
    if src.skipped:
        lines += [f"## Not imported ({len(src.skipped)})", "",
                  "These have no counterpart in smevals and were left out:", ""]
        lines += [f"- `{s.where}`: {s.what}: {s.why}" for s in src.skipped]
    else:
        lines.append("Everything in the config was imported.")
    return "\n".join(lines) + "\n"


def _yaml(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


__all__ = ["PromptfooImport", "import_promptfoo", "short"]
