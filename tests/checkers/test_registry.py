"""The registry: names, lazy loading, option problems, fail-closed run_check, plugins."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import smevals.checkers as checkers
from smevals.checkers import (
    CATALOG_VERSION,
    RESERVED_KEYS,
    CheckInput,
    CheckResult,
    canonical_name,
    checker_names,
    family_table,
    get_checker,
    is_builtin,
    option_problems,
    options_schema,
    run_check,
)
from smevals.checkers.base import Checker
from tests.checkers.helpers import run

ALL = checker_names()


def test_catalog() -> None:
    assert len(ALL) == 45 and sorted(ALL) == ALL
    assert isinstance(CATALOG_VERSION, str) and CATALOG_VERSION
    assert {
        "checker",
        "type",
        "name",
        "required",
        "creates",
        "timeout",
        "weight",
        "min",
        "description",
    } == RESERVED_KEYS


@pytest.mark.parametrize("name", ALL)
def test_every_name_loads_its_declaration(name: str) -> None:
    found = get_checker(name)
    assert found.name == name and found.summary
    props = found.all_properties()
    assert all(o in props for g in found.groups() for o in g)
    assert all(o in props for o in found.task_keys)
    assert all(target in props for target in found.aliases.values())
    Draft202012Validator.check_schema(options_schema(name))


def test_family_tables_hold_only_listed_names() -> None:
    families = {
        "text",
        "regex",
        "json_checks",
        "json_schema",
        "overlap",
        "retrieval",
        "pii",
        "tools",
        "measures",
        "xml_valid",
        "svg",
        "program",
        "command",
        "sql",
        "judges",
        "webhook",
        "strict",
        "inspect_scorers",
        "scripts",
    }
    declared = set()
    for family in families:
        declared |= set(family_table(family))
    assert declared == set(ALL)


@pytest.mark.parametrize(
    "given,expected",
    [
        ("xml-valid", "xml_valid"),
        ("XML-Valid", "xml_valid"),
        (" contains ", "contains"),
        ("bleu_score", "bleu"),
        ("rouge-score", "rouge"),
        ("valid_json", "json_valid"),
        ("my-plugin", "my_plugin"),
    ],
)
def test_canonical_name(given: str, expected: str) -> None:
    assert canonical_name(given) == expected


def test_is_builtin() -> None:
    assert is_builtin("xml-valid") and is_builtin("bleu_score")
    assert not is_builtin("./render-svg") and not is_builtin("nope")


def test_import_is_cheap() -> None:
    code = (
        "import sys, smevals.checkers as c; c.checker_names(); c.is_builtin('regex');"
        "heavy = [m for m in sys.modules if m.startswith(('jsonschema', 're2', "
        "'smevals.checkers.'))];"
        "print(sorted(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['smevals.checkers.base']"


PROBLEMS = [
    ("contains", {"value": "a"}, []),
    ("contains", {}, []),  # the Task's `expected` may supply it
    ("contains", {"value": {"task": "answer"}}, []),
    (
        "contains",
        {"value": {"task": ""}},
        [("value", "{task: KEY} needs KEY to be a non-empty string")],
    ),
    ("contains", {"value": "a", "checker": "contains", "min": 0.5, "name": "x"}, []),
    (
        "contains",
        {"value": True},
        [("value", "expected a non-empty string, a number, or a non-empty list of them, got true")],
    ),
    (
        "contains",
        {"value": ["a", None]},
        [("value.1", "expected a non-empty string or a number, got null")],
    ),
    (
        "not_contains",
        {"fragments": ["a", 5]},
        [("fragments.1", "expected a non-empty string, got 5")],
    ),
    ("not_contains", {}, [("fragments", "missing required option")]),
    (
        "regex",
        {"pattern": "a", "value": "b"},
        [("value", "'value' and 'pattern' name the same option; give one")],
    ),
    ("blocklist", {"terms": ["a", " "]}, [("terms.1", 'expected a non-blank string, got " "')]),
    ("json_field", {"path": "a"}, [("value", "missing required option")]),
    ("latency_threshold", {"maxMs": 5}, []),
    ("no_pii", {}, []),
    ("nope", {}, [("", "unknown checker 'nope'")]),
]


@pytest.mark.parametrize("name,options,expected", PROBLEMS)
def test_option_problems(
    name: str, options: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    assert option_problems(name, options) == expected


def test_unknown_option_lists_the_known_ones() -> None:
    [(path, message)] = option_problems("http_status", {"status": 200, "code": 1})
    assert path == "code"
    assert message == "unknown option for checker 'http_status' (known options: status)"


def test_task_ref_is_type_checked_at_grade_time() -> None:
    result = run("contains", {"value": {"task": "answer"}}, "true", task={"answer": True})
    assert result.ok is False
    assert result.notes.startswith("option 'value': expected")
    assert result.notes.endswith("(from Task key 'answer')")


@pytest.mark.parametrize(
    "name,options",
    [
        (42, {}),
        ("contains", "not a mapping"),
        ("contains", None),
        ("nope", {}),
    ],
)
def test_run_check_never_raises(name: Any, options: Any) -> None:
    result = run_check(name, options, CheckInput(output="x", task={}, usage=None))
    assert isinstance(result, CheckResult) and result.ok is False and result.notes


class _EntryPoint:
    def __init__(self, name: str, obj: Any):
        self.name, self._obj = name, obj

    def load(self) -> Any:
        if isinstance(self._obj, Exception):
            raise self._obj
        return self._obj


def _shout(options: dict[str, Any], inp: CheckInput) -> CheckResult:
    return CheckResult(ok=inp.output.isupper(), score=1.0, tags=["Loud Voice!"])


def _declared(options: dict[str, Any], inp: CheckInput) -> CheckResult:
    return CheckResult(
        ok=len(inp.output) <= options["max"], score=2.0 if options["max"] == 0 else 1.0
    )


PLUGINS = [
    _EntryPoint("shout", _shout),
    _EntryPoint(
        "short-text",
        Checker(
            "short_text",
            _declared,
            "length ceiling",
            properties={"max": {"type": "integer"}},
            required=("max",),
            reads="none",
        ),
    ),
    _EntryPoint("broken", RuntimeError("cannot import")),
    _EntryPoint("weird", 42),
]


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    import smevals.checkers.plugins as module

    monkeypatch.setattr(module, "entry_points", lambda group: PLUGINS)


@pytest.mark.usefixtures("plugins")
def test_function_plugin() -> None:
    result = run("shout", {"anything": 1}, "HEY")
    assert result.as_dict() == {"ok": True, "score": 1.0, "tags": ["loud_voice"]}
    assert not is_builtin("shout")


@pytest.mark.usefixtures("plugins")
def test_declared_plugin_options_are_validated() -> None:
    assert option_problems("short_text", {}) == [("max", "missing required option")]
    assert run("short-text", {"max": 5}, "abc").ok
    assert run("short_text", {"max": "5"}, "abc").ok is False
    assert "invalid score" in run("short_text", {"max": 0}, "").notes


@pytest.mark.usefixtures("plugins")
def test_broken_plugins_fail_closed() -> None:
    assert "cannot load checker plugin 'broken'" in run("broken", {}, "x").notes
    assert "neither a Checker nor a function" in run("weird", {}, "x").notes


def test_crashing_checker_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    from smevals.checkers import text

    def boom(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
        raise ValueError("kaput")

    original = text.CHECKERS["exact"]
    monkeypatch.setitem(
        text.CHECKERS,
        "exact",
        Checker("exact", boom, original.summary, original.properties, original.required),
    )
    result = run("exact", {"value": "x"}, "x")
    assert result.as_dict() == {"ok": False, "notes": "checker crashed: ValueError: kaput"}


def test_registry_module_exports() -> None:
    for name in (
        "RESERVED_KEYS",
        "CATALOG_VERSION",
        "canonical_name",
        "is_builtin",
        "checker_names",
        "option_problems",
        "run_check",
        "CheckInput",
        "CheckResult",
    ):
        assert hasattr(checkers, name)
