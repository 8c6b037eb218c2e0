"""`bleu` agrees with sacrebleu's `sentence_bleu` (its defaults: 13a tokens, 'exp' smoothing,
effective order); `variant: caveman` keeps @caveman/evals' figure. End to end: a Grade."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import sacrebleu
import sacrebleu.tokenizers.tokenizer_13a
from hypothesis import given, settings
from hypothesis import strategies as st

import smevals
from smevals.checkers.sentence_bleu import tokens_13a
from smevals.errors import SmevalsError
from tests.helpers import grade_records, make_eval
from tests.helpers.checkers import version_changed

LONG_REF = ("The committee approved the budget for 2025, including 1,250,000 dollars for "
            "schools, after a debate that lasted three hours and ended at 10.30 p.m.")
LONG_HYP = ("The committee approved the 2025 budget, with 1,250,000 dollars for schools, "
            "after a three-hour debate that ended at 10.30 p.m.")

PAIRS: list[tuple[str, str, list[str]]] = [
    ("the issue's example", "hello world", ["goodbye moon"]),
    ("identical", "the cat sat on the mat", ["the cat sat on the mat"]),
    ("one word identical", "yes", ["yes"]),
    ("short against long", "the cat", ["the cat sat on the mat"]),
    ("long against short", "the cat sat on the mat and then it slept", ["the cat sat"]),
    ("unigrams only", "mat the on sat cat", ["the cat sat on the mat"]),
    ("case kept", "The Cat sat", ["the cat sat"]),
    ("punctuation", "Hello, world! (Really?) \"Yes\": 3.5, 4,000; a-b 12-3.",
     ["Hello , world ! ( really ? ) yes : 3.5 , 4,000 ; a-b 12 - 3 ."]),
    ("html entities and skipped", "a &amp; b &lt;c&gt; &quot;d&quot; <skipped> e",
     ["a & b <c> \"d\" e"]),
    ("line breaks", "a line-\nbreak\nhere  \n", ["a linebreak here"]),
    ("unicode", "Le café coûte 3 € — très cher. 東京は大きい", ["Le café coûte 3 € très cher."]),
    ("emoji", "ok 👍 done", ["ok 👍 done ."]),
    ("long", LONG_HYP, [LONG_REF]),
    ("two references", "the cat was on the mat", ["the cat sat on the mat", "a cat was on a mat"]),
    ("closest reference length tie", "a b c", ["a b", "a b c d"]),
    ("three references", "it is a guide to action",
     ["it is a guide to action that ensures", "it is the guiding principle",
      "it is the practical guide for the army always to heed the directions"]),
]


def ours(hyp: str, refs: list[str]) -> dict[str, Any]:
    reference: str | list[str] = refs[0] if len(refs) == 1 else refs
    return smevals.check({"checker": "bleu", "reference": reference, "threshold": 0}, hyp)


def test_agrees_with_sacrebleu_on_the_table() -> None:
    for name, hyp, refs in PAIRS:
        result = ours(hyp, refs)
        want = sacrebleu.sentence_bleu(hyp, refs).score / 100
        assert result["ok"] is True, (name, result)
        assert result["score"] == pytest.approx(want, abs=1e-9), (name, result, want)
        assert result["metrics"] == {"bleu": result["score"]}, name


def test_the_issues_example_now_fails_its_threshold() -> None:
    result = smevals.check({"checker": "bleu", "reference": "goodbye moon", "threshold": 0.3},
                           "hello world")
    assert result == {"ok": False, "score": 0.0, "metrics": {"bleu": 0.0},
                      "notes": "BLEU 0.0000 is below the threshold 0.3"}


def test_empty_sides() -> None:
    assert sacrebleu.sentence_bleu("", ["the cat"]).score == 0.0   # so does smevals
    for hyp in ("", "   \n"):
        result = ours(hyp, ["the cat"])
        assert (result["ok"], result["score"], result["notes"]) == (
            False, 0.0, "the output has no tokens")
    assert sacrebleu.sentence_bleu("the cat", [""]).score == 0.0   # smevals fails closed
    for refs, where in ((["  "], "reference"), (["the cat", " "], "reference.1")):
        with pytest.raises(SmevalsError, match=f"invalid check 'bleu': {where}: must not be blank"):
            ours("the cat", refs)
    spec = {"checker": "bleu", "reference": {"task": "answer"}}
    assert smevals.check(spec, "the cat", task={"answer": " "}) == {
        "ok": False, "notes": "option 'reference': must not be blank"}
    assert ours("the cat", ["<skipped>"]) == {"ok": False, "notes": "the reference has no tokens"}


def test_validate_names_bad_bleu_options(cli, tmp_path: Path) -> None:
    grader = ("checks:\n"
              "  - checker: bleu\n    reference: [a, b]\n    variant: caveman\n"
              "  - checker: bleu\n    reference: [a, ' ']\n"
              "  - checker: bleu\n    reference: []\n"
              "  - checker: bleu\n    reference: a\n    variant: nltk\n")
    make_eval(tmp_path / "ev", graders={"default": grader})
    res = cli("validate", "ev", cwd=tmp_path)      # paths are shown as given
    where = "ev/graders/default.yaml"
    assert (res.code, res.out) == (2, "")
    assert res.err.splitlines() == [
        f"{where}:3:5: checks[0].reference: variant caveman takes one reference, not 2",
        f"{where}:6:5: checks[1].reference.1: must not be blank",
        f"{where}:8:5: checks[2].reference: expected a non-empty reference text or a "
        "non-empty list of them, got []",
        f"{where}:11:5: checks[3].variant: expected one of 'sacrebleu', 'caveman', got \"nltk\"",
        "4 problems found",
    ]


ALPHABET = "ab 1 2.,-'!\"&;<>/\n\té日€:_^`~{}Z"


@settings(max_examples=300)
@given(st.text(ALPHABET, max_size=16), st.lists(st.text(ALPHABET, max_size=16), min_size=1,
                                                 max_size=3))
def test_tokens_and_scores_agree_on_any_text(hyp: str, refs: list[str]) -> None:
    tokenizer = sacrebleu.tokenizers.tokenizer_13a.Tokenizer13a()  # type: ignore[no-untyped-call]
    assert tokens_13a(hyp) == tokenizer(hyp.rstrip()).split()
    if tokens_13a(hyp) and all(tokens_13a(r) for r in refs):
        assert ours(hyp, refs)["score"] == pytest.approx(
            sacrebleu.sentence_bleu(hyp, refs).score / 100, abs=1e-9)


GRADER = """\
checks:
  - checker: bleu
    reference: goodbye moon
    threshold: 0.3
"""


@pytest.mark.parametrize(("variant", "outcome", "score"),
                         [("", "fail", 0.0), ("    variant: caveman\n", "pass", 0.353553)])
def test_grade_end_to_end(cli, tmp_path: Path, variant: str, outcome: str, score: float) -> None:
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hi\n"},
                   configs={"default": "runner: ./say.sh\nmodel: m\n"},
                   files={"configs/say.sh": "#!/bin/sh\necho hello world\n"},
                   graders={"default": GRADER + variant})
    res = cli("run", str(ev), "-g")
    assert res.code == (1 if outcome == "fail" else 0), res.both
    (grade,) = grade_records(ev)
    assert (grade["outcome"], round(grade["score"], 6)) == (outcome, score)


def test_grades_of_the_old_bleu_are_of_another_grader_version(cli, tmp_path: Path) -> None:
    for number, (checks, changed) in enumerate([
        ([{"checker": "bleu", "reference": "goodbye moon"}], True),
        ([{"checker": "bleu_score", "reference": "x", "variant": "caveman"}], True),
        ([{"checker": "contains", "value": "says"}], False),    # other graders keep theirs
    ]):
        assert version_changed(cli, tmp_path / str(number), checks) is changed, checks
