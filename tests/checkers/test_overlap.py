"""token_f1, citation_coverage, bleu, rouge, context_f1, localization_f1."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smevals.checkers.edit_distance import levenshtein
from smevals.checkers.overlap import lcs_length, pinned_tokens, word_tokens
from tests.helpers.checkers import Case, case, levenshtein_dp, run, verify

REF = "the cat sat on the mat"

TABLE = [
    # token_f1 (ai-eval-forge): multiset F1 of [a-z0-9] tokens; threshold defaults to 1
    case("token_f1", "identical", {"value": "The cat sat."}, "the CAT sat", score=1.0),
    case("token_f1", "partial", {"value": "the cat sat"}, "the dog sat", ok=False, score=2 / 3),
    case("token_f1", "threshold", {"value": "the cat sat", "threshold": 0.6}, "the dog sat"),
    case("token_f1", "multiset", {"value": "a a b"}, "a b b", ok=False, score=2 / 3),
    case("token_f1", "ascii-only-tokens", {"value": "caf"}, "café", score=1.0),
    case("token_f1", "task-expected", {}, "paris", task={"expected": "Paris"}),
    case("token_f1", "empty-output", {"value": "x"}, "", ok=False, score=0.0),
    case(
        "token_f1",
        "empty-expected-fails-closed",
        {"value": ""},
        "",
        ok=False,
        score=None,
        notes="no tokens",
    ),
    case("token_f1", "punctuation-only-expected", {"value": "!!"}, "!!", ok=False, score=None),
    case("token_f1", "missing", {}, "x", ok=False, notes="'expected' key"),
    case(
        "token_f1",
        "bad-threshold",
        {"value": "x", "threshold": 2},
        "x",
        ok=False,
        notes="option 'threshold'",
    ),
    # citation_coverage: whole-id matches, threshold defaults to 1
    case(
        "citation_coverage",
        "all",
        {"sources": ["s1", {"id": "s2"}]},
        "see [s1] and (s2)",
        score=1.0,
    ),
    case(
        "citation_coverage",
        "partial",
        {"sources": ["s1", "s2"]},
        "see s1",
        ok=False,
        score=0.5,
        notes="missing 's2'",
    ),
    case(
        "citation_coverage",
        "no-prefix-match",
        {"sources": ["src1"]},
        "see src10",
        ok=False,
        score=0.0,
    ),
    case("citation_coverage", "numeric-ids", {"sources": [1, 2.0]}, "[1] [2]"),
    case("citation_coverage", "threshold", {"sources": ["a1", "b2"], "threshold": 0.5}, "a1"),
    case("citation_coverage", "task-sources", {}, "cites d9", task={"sources": [{"id": "d9"}]}),
    case("citation_coverage", "empty-sources", {"sources": []}, "x", ok=False),
    case(
        "citation_coverage",
        "blank-ids",
        {"sources": [" ", ""]},
        "x",
        ok=False,
        notes="no non-blank source ids",
    ),
    case("citation_coverage", "object-without-id", {"sources": [{"url": "x"}]}, "x", ok=False),
    # bleu: sacrebleu's figures (tests/checkers/test_bleu.py); @caveman/evals' with the variant
    case("bleu", "identical", {"reference": REF}, REF, score=1.0),
    case("bleu", "disjoint", {"reference": "a b c d"}, "e f g h", ok=False, score=0.0),
    case("bleu", "caveman-identical", {"reference": REF, "variant": "caveman"}, REF, score=1.0),
    case("bleu", "caveman-disjoint", {"reference": "a b c d", "variant": "caveman"}, "e f g h",
         ok=False, score=0.2259),
    case("bleu", "caveman-brevity", {"reference": REF, "variant": "caveman"}, "the cat",
         ok=False, score=0.1353),
    case("bleu", "caveman-threshold", {"reference": REF, "threshold": 0.1, "variant": "caveman"},
         "the cat", score=0.1353),
    case("bleu", "caveman-one-reference", {"reference": ["a", "b"], "variant": "caveman"}, "a",
         ok=False, score=None, notes="variant caveman takes one reference, not 2"),
    case("bleu", "bad-variant", {"reference": REF, "variant": "nltk"}, REF, ok=False,
         score=None, notes="option 'variant'"),
    case("bleu", "task-reference", {}, REF, task={"reference": REF}),
    case("bleu", "blank-reference", {"reference": "  "}, REF, ok=False, score=None),
    case("bleu", "empty-output", {"reference": REF}, "  ", ok=False, score=0.0),
    case("bleu_score", "caveman-name", {"reference": REF}, REF),
    # rouge
    case("rouge", "rouge-1", {"reference": REF}, "the cat on mat", score=0.8),
    case(
        "rouge", "rouge-l", {"reference": REF, "rouge_type": "rouge_l"}, "the cat on mat", score=0.8
    ),
    case(
        "rouge",
        "rouge-l-order",
        {"reference": "a b c d", "rouge_type": "rouge_l"},
        "d c b a",
        ok=False,
        score=0.25,
    ),
    case(
        "rouge",
        "rouge-2",
        {"reference": REF, "rouge_type": "rouge_2"},
        "the cat on mat",
        ok=False,
        score=0.25,
    ),
    case("rouge", "precision", {"reference": REF, "measure": "precision"}, "the cat", score=1),
    case(
        "rouge", "recall", {"reference": REF, "measure": "recall"}, "the cat", ok=False, score=1 / 3
    ),
    case(
        "rouge",
        "rouge-2-short-reference",
        {"reference": "x", "rouge_type": "rouge_2"},
        "x",
        ok=False,
        score=None,
        notes="too short",
    ),
    case(
        "rouge",
        "unknown-type",
        {"reference": REF, "rouge_type": "rouge_3"},
        REF,
        ok=False,
        notes="option 'rouge_type'",
    ),
    # context_f1: fuzzy list matching
    case(
        "context_f1",
        "f1",
        {
            "expected": ["The cat sat on the mat", "dogs bark"],
            "retrieved": ["the cat sat on a mat", "birds sing"],
        },
        score=0.5,
    ),
    case(
        "context_f1",
        "from-output-lines",
        {"expected": ["alpha beta"]},
        "alpha  beta\ngamma",
        score=2 / 3,
    ),
    case("context_f1", "from-output-json", {"expected": ["a"]}, '["a"]', score=1.0),
    case("context_f1", "task-context", {}, "a passage", task={"context": ["A passage"]}),
    case(
        "context_f1",
        "recall",
        {"expected": ["x", "y"], "retrieved": ["x"], "measure": "recall", "threshold": 0.6},
        ok=False,
        score=0.5,
    ),
    case(
        "context_f1",
        "similarity-threshold",
        {"expected": ["kitten"], "retrieved": ["sitting"], "similarity_threshold": 0.5},
        score=1.0,
    ),
    case("context_f1", "empty-expected", {"expected": []}, "x", ok=False, score=None),
    case(
        "context_f1", "empty-retrieved", {"expected": ["x"], "retrieved": []}, ok=False, score=0.0
    ),
    case("context_f1", "all-blank", {"expected": [" ", ""]}, "x", ok=False, notes="blank"),
    case("context_f1", "too-many", {"expected": ["x"] * 65}, "x", ok=False, notes="more than"),
    # localization_f1
    case("localization_f1", "exact", {"reference": "a.py:1-10"}, "a.py:1-10", score=1.0),
    case(
        "localization_f1",
        "partial-overlap-fails",
        {"reference": "a.py:1-10"},
        "a.py:5-14",
        ok=False,
        notes="line IoU 0.4286",
    ),
    case(
        "localization_f1",
        "partial-overlap-low-threshold",
        {"reference": "a.py:1-10", "line_threshold": 0.4},
        "a.py:5-14",
    ),
    case("localization_f1", "extra-file", {"reference": "a.py:1-10"}, "a.py:1-10\nb.py:3"),
    case(
        "localization_f1",
        "map-reference",
        {"reference": {"a.py": [[10, 1]], "b.py": None}},
        '["a.py:1-10", {"path": "b.py"}]',
        score=1.0,
    ),
    case(
        "localization_f1",
        "object-form",
        {"reference": [{"path": "a.py", "lines": [[1, 2]]}]},
        "a.py:1,2",
    ),
    case("localization_f1", "no-shared-file", {"reference": "a.py"}, "b.py", ok=False, score=0.0),
    case(
        "localization_f1",
        "zero-threshold-still-needs-overlap",
        {"reference": "a.py:1-2", "threshold": 0},
        "a.py:5-6",
        ok=False,
    ),
    case(
        "localization_f1",
        "unparseable",
        {"reference": "a.py:1-10"},
        "a.py:x-y",
        ok=False,
        score=0.0,
        notes="unparseable location",
    ),
    case(
        "localization_f1",
        "empty-output",
        {"reference": "a.py"},
        "\n \n",
        ok=False,
        notes="no locations",
    ),
    case("localization_f1", "bad-reference", {"reference": "a.py:?"}, "a.py", ok=False, score=None),
    case("localization_f1", "task-expected", {}, "a.py:3", task={"expected": "a.py:3"}),
]


@pytest.mark.parametrize("name,c", TABLE)
def test_table(name: str, c: Case) -> None:
    verify(name, c)


def test_overlap_scores_are_metrics() -> None:
    result = run("rouge", {"reference": REF, "rouge_type": "rouge_l"}, "the cat on mat")
    assert set(result.metrics) == {"rouge_l_precision", "rouge_l_recall", "rouge_l_f"}


def test_tokenizers() -> None:
    assert word_tokens("Café, NO-2!") == [b"caf", b"no", b"2"]
    assert pinned_tokens("Héllo, wörld! 😀") == ["h", "é", "llo", ",", "w", "ö", "rld", "!", "😀"]


def _lcs_dp(a: list[str], b: list[str]) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], prev + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


@settings(max_examples=200)
@given(
    st.lists(st.sampled_from("abcd"), max_size=30), st.lists(st.sampled_from("abcd"), max_size=30)
)
def test_lcs_matches_dynamic_programming(a: list[str], b: list[str]) -> None:
    assert lcs_length(a, b) == _lcs_dp(a, b)


@settings(max_examples=200)
@given(st.text(alphabet="abcé ", max_size=30), st.text(alphabet="abcé ", max_size=30))
def test_levenshtein_matches_dynamic_programming(a: str, b: str) -> None:
    assert levenshtein(a, b) == levenshtein_dp(a, b)
