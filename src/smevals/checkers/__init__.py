"""Built-in checkers: a registry by name, one module per family, loaded on first use.

Importing this package is cheap: the table below names each built-in and its family
module; jsonschema, re2 and the family modules load only when a check needs them.
Third-party checkers come from the `smevals.checkers` entry-point group, looked up
only for a name that is not built in. To add a built-in: write it in a family module
(`@checker(CHECKERS, "name", ...)`) and add one line to `_FAMILY`. A family that lives in a
layer above this package (the judge checkers) is provided through smevals.wiring.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from smevals import wiring
from smevals.checkers.base import (
    Checker,
    CheckError,
    CheckFailure,
    CheckInput,
    CheckResult,
    sanitize,
)

__all__ = [
    "CATALOG_VERSION",
    "REVISED",
    "RESERVED_KEYS",
    "CheckInput",
    "CheckResult",
    "canonical_name",
    "checker_names",
    "get_checker",
    "is_builtin",
    "option_problems",
    "options_schema",
    "run_check",
]

RESERVED_KEYS: frozenset[str] = frozenset(
    {"checker", "type", "name", "required", "creates", "timeout", "weight", "min", "description"}
)

CATALOG_VERSION = "1"

# Built-ins whose figures changed since CATALOG_VERSION: a grader that uses one hashes this
# in (smevals.grade.version), so Grades made before the change count as an older version.
REVISED: dict[str, str] = {"bleu": "2: sacrebleu's sentence_bleu",
                           "sql_execution": "2: Spider's result_eq (column orders, empty results)",
                           "command": "2: machinery refused, Python isolated, the report "
                                      "outside the tree, figures over the exit code, counts "
                                      "against a clean tree; tampering marks (issue 34)"}

_FAMILY: dict[str, str] = {
    "contains": "text",
    "exact": "text",
    "exact_match": "text",
    "equals": "strict",
    "not_contains": "text",
    "blocklist": "text",
    "levenshtein": "text",
    "regex": "regex",
    "not_regex": "regex",
    "json_valid": "json_checks",
    "json_field": "json_checks",
    "json_schema": "json_schema",
    "json_path_assertion": "json_checks",
    "token_f1": "overlap",
    "bleu": "overlap",
    "rouge": "overlap",
    "citation_coverage": "overlap",
    "context_f1": "retrieval",
    "localization_f1": "retrieval",
    "no_pii": "pii",
    "tool_called": "tools",
    "tool_not_called": "tools",
    "tool_sequence": "tools",
    "tool_argument_assertion": "tools",
    "http_status": "measures",
    "latency_threshold": "measures",
    "cost_threshold": "measures",
    "token_threshold": "measures",
    "xml_valid": "xml_valid",
    "render_svg": "svg",
    "match_output": "program",
    "inspect_match": "inspect_scorers",
    "inspect_exact": "inspect_scorers",
    "inspect_choice": "inspect_scorers",
    "javascript": "scripts",
    "python": "scripts",
    "command": "command",
    "sql_execution": "sql",
    "sql_valid": "sql",
    "llm_judge": "judges",
    "llm_score": "judges",
    "llm_category": "judges",
    "llm_answer_match": "judges",
    "llm_pairwise": "judges",
    "custom_webhook": "webhook",
}

# Options that name a file relative to the grader's folder: `smevals validate` checks that
# it is there, and the grader version hashes its content (smevals.grade.version).
GRADER_FILES: dict[str, str] = {"sql_execution": "database", "sql_valid": "database",
                                "javascript": "script", "python": "script"}

# Other tools' names for the same checker (@caveman/evals, caveman's Go harness).
_NAME_ALIASES: dict[str, str] = {
    "bleu_score": "bleu",
    "rouge_score": "rouge",
    "valid_json": "json_valid",
}

_ENTRY_POINT_GROUP = "smevals.checkers"


def canonical_name(name: str) -> str:
    """`"xml-valid"` -> `"xml_valid"`; other tools' aliases map onto our names."""
    key = name.strip().lower().replace("-", "_")
    return _NAME_ALIASES.get(key, key)


def is_builtin(name: str) -> bool:
    return isinstance(name, str) and canonical_name(name) in _FAMILY


def checker_names() -> list[str]:
    return sorted(_FAMILY)


def family_table(family: str) -> Mapping[str, Checker]:
    """The checkers of a family by name: a module of this package, or a family a layer above
    provides through smevals.wiring (the judge checkers live in `smevals.judges`)."""
    provided = wiring.CHECKER_FAMILIES.get(family)
    if provided is not None:
        return provided()
    from importlib import import_module

    table: Mapping[str, Checker] = import_module(f"smevals.checkers.{family}").CHECKERS
    return table


def _load(name: str) -> Checker:
    """The declaration of `name` (built-in, else an entry point); CheckFailure if none."""
    if not isinstance(name, str):
        raise CheckFailure(f"checker name must be a string, not {type(name).__name__}")
    key = canonical_name(name)
    family = _FAMILY.get(key)
    if family is not None:
        return family_table(family)[key]
    from smevals.checkers.plugins import load_plugin

    found = load_plugin(_ENTRY_POINT_GROUP, key)
    if found is None:
        raise CheckFailure(f"unknown checker {name!r}")
    return found


def get_checker(name: str) -> Checker:
    """The declaration of a built-in or plugin checker; KeyError (with a message) if none."""
    try:
        return _load(name)
    except CheckFailure as exc:
        known = ", ".join(checker_names())
        raise KeyError(f"{exc.reason}; built-in checkers: {known}") from None


def options_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of a checker's options (for docs and editor tooling)."""
    return _load(name).json_schema()


def option_problems(name: str, options: dict[str, Any]) -> list[tuple[str, str]]:
    """Static problems for `smevals validate`: (option path, message) pairs.

    An option given as `{task: KEY}` is accepted here and type-checked at grade time.
    """
    try:
        found = _load(name)
        opts = _strip_reserved(options)
    except CheckFailure as exc:
        return [("", exc.reason)]
    from smevals.checkers.options import static_problems

    try:
        return static_problems(found, opts)
    except Exception as exc:  # a bug or an odd value must not crash `smevals validate`
        return [("", f"cannot check the options: {type(exc).__name__}: {exc}"[:300])]


def task_needs(name: str, options: dict[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    """The Task keys a Check of `name` with `options` reads: (option, keys, one needed)."""
    try:
        found = _load(name)
        opts = _strip_reserved(options)
    except CheckFailure:
        return []
    from smevals.checkers.options import task_needs as needs

    return needs(found, opts)


def run_check(name: str, options: dict[str, Any], inp: CheckInput) -> CheckResult:
    """Run one Check in-process. Never raises: every problem becomes ok=False."""
    try:
        found = _load(name)
        from smevals.checkers.options import prepare

        opts = prepare(found, _strip_reserved(options), inp.task)
        return _finish(found.fn(opts, inp))
    except CheckFailure as exc:
        return CheckResult(ok=False, score=exc.score, notes=exc.reason, details=exc.details)
    except CheckError as exc:
        return CheckResult(ok=False, notes=exc.reason, details=exc.details, error=True)
    except RecursionError:
        return CheckResult(ok=False, notes="input nested too deeply to check")
    except Exception as exc:  # fail closed: a crashing checker fails its Check
        return CheckResult(ok=False, notes=f"checker crashed: {type(exc).__name__}: {exc}"[:500])


def _strip_reserved(options: object) -> dict[str, Any]:
    if not isinstance(options, Mapping):
        raise CheckFailure(f"check options must be a mapping, not {type(options).__name__}")
    return {k: v for k, v in options.items() if k not in RESERVED_KEYS}


def _finish(result: object) -> CheckResult:
    """Guard against a (third-party) checker returning something malformed."""
    if not isinstance(result, CheckResult):
        raise CheckFailure(f"checker returned {type(result).__name__}, not a CheckResult")
    return sanitize(result)
