"""regex and not_regex on RE2."""

from __future__ import annotations

import pytest

from smevals.checkers import option_problems
from tests.helpers.checkers import Case, case, run, verify

TABLE = [
    case("regex", "match", {"pattern": r"\d+ apples"}, "I have 12 apples", score=1.0),
    case(
        "regex",
        "no-match",
        {"pattern": r"^apples"},
        "I have apples",
        ok=False,
        score=0.0,
        notes="no match for '^apples'",
    ),
    case("regex", "case-sensitive-by-default", {"pattern": "APPLES"}, "apples", ok=False),
    case("regex", "flag-i", {"pattern": "APPLES", "flags": "i"}, "apples"),
    case("regex", "flag-m", {"pattern": "^b$", "flags": "m"}, "a\nb\nc"),
    case("regex", "flag-s", {"pattern": "a.b", "flags": "s"}, "a\nb"),
    case("regex", "no-flag-s", {"pattern": "a.b"}, "a\nb", ok=False),
    case("regex", "value-alias", {"value": "ab+"}, "abbb"),
    case(
        "regex",
        "empty-pattern",
        {"pattern": ""},
        "x",
        ok=False,
        score=None,
        notes="option 'pattern'",
    ),
    case(
        "regex", "bad-flags", {"pattern": "a", "flags": "x"}, "a", ok=False, notes="option 'flags'"
    ),
    case(
        "regex",
        "backreference",
        {"pattern": r"(a)\1"},
        "aa",
        ok=False,
        score=None,
        notes="RE2 does not support backreferences",
    ),
    case(
        "regex",
        "named-backreference",
        {"pattern": r"(?P<x>a)(?P=x)"},
        "aa",
        ok=False,
        notes="RE2 does not support backreferences",
    ),
    case(
        "regex",
        "lookahead",
        {"pattern": r"a(?=b)"},
        "ab",
        ok=False,
        notes="RE2 does not support lookahead",
    ),
    case(
        "regex",
        "lookbehind",
        {"pattern": r"(?<=a)b"},
        "ab",
        ok=False,
        notes="RE2 does not support lookbehind",
    ),
    case("regex", "invalid", {"pattern": "[a"}, "a", ok=False, notes="invalid regex for RE2"),
    case("regex", "missing", {}, "a", ok=False, notes="missing required option"),
    case("not_regex", "clean", {"pattern": r"\bTODO\b"}, "all done", score=1.0),
    case(
        "not_regex",
        "found",
        {"pattern": r"\bTODO\b"},
        "x\nTODO: y",
        ok=False,
        score=0.0,
        notes="at offset 2",
    ),
    case("not_regex", "trailing-newline-dropped", {"pattern": r"\n\z"}, "text\n"),
    case("not_regex", "crlf-normalised", {"pattern": "\r"}, "a\r\nb\rc"),
    case("not_regex", "empty-pattern", {"pattern": ""}, "x", ok=False),
    case(
        "not_regex",
        "lookahead",
        {"pattern": "(?!x)"},
        "x",
        ok=False,
        notes="RE2 does not support lookahead",
    ),
]


@pytest.mark.parametrize("name,c", TABLE)
def test_table(name: str, c: Case) -> None:
    verify(name, c)


def test_catastrophic_pattern_finishes() -> None:
    result = run("regex", {"pattern": "(a+)+$"}, "a" * 50000 + "!")
    assert result.ok is False and result.score == 0.0


def test_catastrophic_pattern_matches_when_it_should() -> None:
    assert run("regex", {"pattern": "(a+)+$"}, "a" * 50000).ok


def test_not_regex_never_echoes_the_match() -> None:
    result = run("not_regex", {"pattern": r"\d{4}"}, "pin 1234")
    assert "1234" not in result.notes


def test_validate_reports_re2_problems() -> None:
    assert option_problems("regex", {"pattern": r"(a)\1"})[0][0] == "pattern"
    assert "RE2 does not support" in option_problems("regex", {"pattern": r"(a)\1"})[0][1]
    assert option_problems("regex", {"pattern": {"task": "p"}}) == []


def test_non_ascii_offsets_are_characters() -> None:
    result = run("not_regex", {"pattern": "b"}, "ééb")
    assert result.details == {"offset": 2}
