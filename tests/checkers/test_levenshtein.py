"""levenshtein: exact distances, the banded cut-off against the full computation, huge
inputs, and its options at `smevals validate`."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smevals.checkers.edit_distance import MAX_BAND, bounded, levenshtein, trim_common, within
from tests.checkers.helpers import Case, case, levenshtein_dp, run, verify
from tests.helpers import make_eval

TABLE = [
    case("levenshtein", "kitten-sitting", {"value": "sitting"}, "kitten", score=1 - 3 / 7),
    case("levenshtein", "flaw-lawn", {"value": "lawn"}, "flaw", score=0.5),
    case("levenshtein", "two-empty-strings", {"value": ""}, "", score=1.0),
    case("levenshtein", "empty-output", {"value": "abc"}, "", score=0.0),
    case("levenshtein", "identical", {"value": "Paris"}, "Paris", score=1.0),
    case("levenshtein", "code-points-not-bytes", {"value": "cafe"}, "café", score=0.75),
    case("levenshtein", "emoji-modifier", {"value": "👍"}, "👍🏽", score=0.5),
    case("levenshtein", "at-the-limit", {"value": "sitting", "max_distance": 3}, "kitten"),
    case("levenshtein", "over-the-limit", {"value": "sitting", "max_distance": 2}, "kitten",
         ok=False, score=1 - 3 / 7,
         notes="output.txt is 3 edits from the expected value (at most 2 allowed)"),
    case("levenshtein", "zero-is-exact", {"value": "Paris", "max_distance": 0}, "paris",
         ok=False, score=0.8),
    case("levenshtein", "default-limit-5", {"value": "abcdef"}, "uvwxyz", ok=False, score=0.0,
         notes="6 edits"),
    case("levenshtein", "whole-output-by-default", {"value": "Paris", "max_distance": 0},
         "Paris\n", ok=False, notes="1 edits"),
    case("levenshtein", "strip", {"value": " Paris ", "max_distance": 0, "strip": True},
         "\nParis\n", score=1.0),
    case("levenshtein", "task-expected", {}, "Lima", task={"expected": "Lima."},
         score=0.8),
    case("levenshtein", "task-ref", {"value": {"task": "city"}}, "Rome", task={"city": "Roma"},
         score=0.75),
    case("levenshtein", "task-value-not-a-string", {}, "1", task={"expected": 1}, ok=False,
         score=None, notes="option 'value': expected a string, got 1"),
    case("levenshtein", "no-value", {}, "x", ok=False, score=None,
         notes="missing required option (and the Task has no 'expected' key)"),
]


@pytest.mark.parametrize(("name", "c"), TABLE)
def test_levenshtein_table(name: str, c: Case) -> None:
    verify(name, c)


def test_details_record_the_distance(tmp_path: Path) -> None:
    assert run("levenshtein", {"value": "sitting"}, "kitten").details == {"distance": 3}
    (tmp_path / "answer.txt").write_text("sittin")
    got = run("levenshtein", {"value": "sitting", "file": "answer.txt"}, "unrelated",
              workspace=tmp_path)
    assert (got.ok, got.details) == (True, {"distance": 1})


@settings(max_examples=300)
@given(st.text(alphabet="abé", max_size=25), st.text(alphabet="abé", max_size=25),
       st.integers(0, 12))
def test_band_agrees_with_the_full_computation(a: str, b: str, k: int) -> None:
    full = levenshtein_dp(a, b)
    assert levenshtein(a, b) == full
    assert within(a, b, k) == (full if full <= k else k + 1)
    assert levenshtein(*trim_common(a, b)) == full
    assert bounded(a, b, k) == full             # short texts: always the exact distance


@settings(max_examples=100)
@given(st.text(alphabet="ab", min_size=1, max_size=300), st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 299), st.sampled_from("abc")), max_size=8),
       st.integers(0, 10))
def test_band_on_long_near_copies(base: str, edits: list[tuple[int, int, str]],
                                  k: int) -> None:
    """Long common runs: the galloping slide must stop exactly at the first difference."""
    chars = list(base)
    for op, pos, char in edits:
        pos %= len(chars) + 1
        if op == 0:
            chars.insert(pos, char)
        elif pos < len(chars):
            chars[pos:pos + 1] = [] if op == 1 else [char]
    other = "".join(chars)
    full = levenshtein(base, other)
    assert within(base, other, k) == (full if full <= k else k + 1)
    assert bounded(base, other, k) == full


def test_many_distinct_characters_take_the_other_orientation() -> None:
    """Over 64 distinct characters in the shorter text: the longer one is scanned."""
    rng = random.Random(3)
    alphabet = [chr(0x4E00 + i) for i in range(100)] + list("abc")
    for _ in range(10):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(150, 220)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randint(150, 220)))
        assert len(set(a)) > 64 and len(set(b)) > 64
        assert levenshtein(a, b) == levenshtein(b, a) == levenshtein_dp(a, b)


def test_huge_inputs_use_the_band() -> None:
    rng = random.Random(7)
    big = "".join(rng.choice("abcdefgh ") for _ in range(1_000_000))
    near = run("levenshtein", {"value": big + "x"}, "x" + big)
    assert (near.ok, near.details) == (True, {"distance": 2})
    far_text = "".join(rng.choice("abcdefgh ") for _ in range(1_000_000))
    far = run("levenshtein", {"value": far_text}, big)
    assert far.as_dict() == {
        "ok": False, "details": {"distance_above": 5},
        "notes": "output.txt is more than 5 edits from the expected value (the exact distance "
                 "is not computed for texts this long)"}
    assert bounded(big, far_text, MAX_BAND) is None
    wide = run("levenshtein", {"value": far_text, "max_distance": 1000}, big)
    assert (wide.ok, wide.score) == (False, None)
    assert wide.notes == ("the texts are too long to compare within 1000 edits (above 500, "
                          "only the exact distance up to 500 is computed for texts this long)")
    short = run("levenshtein", {"value": "Paris"}, "Paris" * 200_000)
    assert (short.ok, short.details) == (False, {"distance": 999_995})


def test_bad_options_at_validate(cli, tmp_path: Path) -> None:
    grader = ("checks:\n"
              "  - checker: levenshtein\n    value: Paris\n    max_distance: -1\n"
              "  - checker: levenshtein\n    value: 3\n"
              "  - checker: levenshtein\n    value: Paris\n    max_distance: 2.5\n"
              "  - checker: levenshtein\n    value: Paris\n    threshold: 2\n"
              "  - checker: levenshtein\n    value: Paris\n    strip: yes please\n")
    make_eval(tmp_path / "ev", graders={"default": grader})
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.code == 2, res.both
    assert res.err.splitlines() == [
        "ev/graders/default.yaml:4:5: checks[0].max_distance: expected a non-negative whole "
        "number, got -1",
        "ev/graders/default.yaml:6:5: checks[1].value: expected a string, got 3",
        "ev/graders/default.yaml:9:5: checks[2].max_distance: expected a non-negative whole "
        "number, got 2.5",
        "ev/graders/default.yaml:12:5: checks[3].threshold: unknown option for checker "
        "'levenshtein' (known options: file, max_distance, strip, utf16, value)",
        "ev/graders/default.yaml:15:5: checks[4].strip: expected true or false, got "
        "\"yes please\"",
        "5 problems found",
    ]


def test_a_bad_value_taken_from_the_task_says_which_task_key_it_came_from() -> None:
    from smevals.checkers import CheckInput, run_check

    result = run_check("levenshtein", {}, CheckInput(output="x", task={"expected": 5}, usage={},
                                                      workspace=Path(".")))
    assert not result.ok
    assert result.notes == "option 'value': expected a string, got 5 (from Task key 'expected')"
