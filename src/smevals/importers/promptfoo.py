"""`smevals import promptfoo CONFIG DIR`: an Eval from a promptfoo config.

prompts × providers → Configs (`prompt_template`, text or chat messages; the
`smevals:openai` runner), listed in eval.yaml's `configs` so that `smevals run DIR` runs them
all; tests (expanded as promptfoo expands them) → `tasks/tests.jsonl` (vars as Task keys,
assertion values as grading keys); assertions → Checks in `graders/default.yaml` (a test's
own assertion applies only to the Tasks that carry its value, through `if_task_has`). Each
assertion is kept exactly, kept by another rule (said, with why), or not imported (said,
with why), with its file and line: in the returned report and in the Eval's README.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from smevals.importers.common import new_eval_folder, write_eval
from smevals.importers.pf_asserts import APPROXIMATE, EXACT, MISSING, Mapped, check_for
from smevals.importers.pf_configs import ConfigPlan, config_matrix, read_providers
from smevals.importers.pf_grader import ASSERT_KEYS, Built, GraderBuilder, Taken
from smevals.importers.pf_prompts import read_prompts
from smevals.importers.pf_report import PromptfooImport, readme
from smevals.importers.pf_source import (
    ImportInputError,
    Source,
    key_for,
    load_config,
    nunjucks_text,
    short,
)
from smevals.importers.pf_tests import Case, default_test, expand, read_tests, var_value

TOP_KEYS = frozenset({"description", "prompts", "providers", "targets", "tests",
                      "defaultTest", "assertionTemplates"})
NOT_IMPORTED = "not imported"
TEST_KEY = "promptfoo_test"     # the grading key holding a test's vars for code assertions


def import_promptfoo(config: Path, target: Path) -> PromptfooImport:
    new_eval_folder(target)
    src = load_config(config)
    for key in src.data:
        if key not in TOP_KEYS:
            src.skip(src.key_where(src.data, key), f"top-level key {key}", "no counterpart")
    plans = config_matrix(read_prompts(src), read_providers(src))
    default = default_test(src)
    raw = read_tests(src) or [Case({}, [], src.where(src.data))]
    cases = [c for case in raw for c in expand(src, _merged(case, default))]
    grader = GraderBuilder(src)
    rows = [_row(i, case, default, grader, src) for i, case in enumerate(cases, 1)]
    built = grader.finish()
    _fill_missing(rows, plans)
    files = _documents(src, plans, rows, built)
    done = PromptfooImport(target, len(rows), list(plans), len(built.checks), src.skipped,
                           built.placed, built.no_check(rows), plans,
                           {f"test-{i}": c.vars for i, c in enumerate(cases, 1)})
    files["README.md"] = readme(src, done)
    write_eval(target, files)
    return done


def _merged(case: Case, default: Case | None) -> Case:
    """A test with defaultTest's vars under its own (promptfoo merges them first)."""
    if default is None:
        return case
    return Case({**default.vars, **case.vars}, case.asserts, case.where, case.description,
                {**default.metadata, **case.metadata}, case.changed or default.changed)


def _row(i: int, case: Case, default: Case | None, grader: GraderBuilder, src: Source
         ) -> dict[str, Any]:
    name = f"test-{i}"
    grader.where[name] = case.where
    vars_ = {k: var_value(src, v, case.where, k) for k, v in case.vars.items()}
    row: dict[str, Any] = {"name": name}
    row.update({key_for(k): nunjucks_text(v) for k, v in vars_.items()})
    if case.description is not None and "description" not in row:
        row["description"] = case.description
    if case.metadata and "metadata" not in row:
        row["metadata"] = case.metadata
    test = {"vars": vars_, **({"description": case.description} if case.description else {}),
            **({"metadata": case.metadata} if case.metadata else {})}
    asserts = (default.asserts if default else []) + case.asserts
    grading: dict[str, Any] = {}
    seen: dict[str, int] = {}
    code = False
    for position, a in enumerate(asserts):
        from_default = default is not None and position < len(default.asserts)
        code |= grader.place(_assertion(src, a.doc, a.where, vars_, case.changed), a.where,
                             name, position, from_default, grading, seen)
    if code:
        grading[TEST_KEY] = test
    if grading:
        row["grading"] = grading
    return row


def _assertion(src: Source, doc: object, where: str, vars_: dict[str, Any], changed: str
               ) -> Taken:
    from smevals.importers.pf_values import resolve_value

    if isinstance(doc, dict) and set(doc) == {"$ref"}:
        doc = _ref(src, doc["$ref"], where)
    if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
        return Taken("assertion", Mapped(None, "not a mapping with a `type`"), {})
    kind = doc["type"]
    extra = [k for k in doc if k not in ASSERT_KEYS]
    if extra:
        return Taken(kind, Mapped(None, f"uses {', '.join(extra)}: no counterpart"), doc)
    if doc.get("weight") == 0:
        return Taken(kind, Mapped(None, "weight 0: promptfoo counts it as a pass whatever the "
                                  "output"), doc)
    value, needs_vars, why = resolve_value(src, kind, doc.get("value", MISSING), where, vars_)
    if why:
        return Taken(kind, Mapped(None, why), doc)
    mapped = value if isinstance(value, Mapped) else check_for(kind, value,
                                                               doc.get("threshold"))
    if mapped.options is not None and changed and mapped.fidelity == EXACT:
        mapped.fidelity, mapped.why = APPROXIMATE, changed
    return Taken(kind, mapped, doc, needs_vars)


def _ref(src: Source, ref: object, where: str) -> object:
    """An assertion given as `$ref: '#/assertionTemplates/NAME'` (a path in this config)."""
    node: Any = src.data
    parts = ref[2:].split("/") if isinstance(ref, str) and ref.startswith("#/") else None
    for part in parts or ():
        node = node.get(part) if isinstance(node, dict) else None
    if parts is None or not isinstance(node, dict):
        raise ImportInputError(f"{where}: $ref {ref!r}: no such assertion in this config")
    return node


def _fill_missing(rows: list[dict[str, Any]], plans: dict[str, ConfigPlan]) -> None:
    """promptfoo renders a var a test lacks as empty text: give every Task the keys the
    templates use."""
    import re

    used: set[str] = set()
    for plan in plans.values():
        text = json.dumps(plan.doc.get("prompt_template")) + str(plan.doc.get("system"))
        used |= set(re.findall(r"(?<!\\)\{\{task\.([^}]+)\}\}", text))
    for row in rows:
        for key in sorted(used - {"name"}):
            row.setdefault(key, "")


def _documents(src: Source, plans: dict[str, ConfigPlan], rows: list[dict[str, Any]],
               built: Built) -> dict[str, str]:
    desc = src.data.get("description")
    head: dict[str, Any] = {"description": str(desc) if desc else
                            f"Imported from the promptfoo config {src.path.name}"}
    if list(plans) != ["default"]:
        head["configs"] = list(plans)
    files = {"eval.yaml": _yaml(head)}
    for name, plan in plans.items():
        files[f"configs/{name}.yaml"] = _yaml(plan.doc)
    files["tasks/tests.jsonl"] = "".join(json.dumps(r, ensure_ascii=False) + "\n"
                                         for r in rows)
    if built.checks:
        files["graders/default.yaml"] = _yaml({"description": f"The assertions of "
                                               f"{src.path.name}", "checks": built.checks,
                                               "scoring": {"method": "weighted"}})
    files.update(built.files)
    return files


def _yaml(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


__all__ = ["NOT_IMPORTED", "import_promptfoo", "short"]
