"""The unpaired statistics of a diff's evidence part (smevals/diff/twosample.py) against
values worked out by hand, and the clipped mean interval (smevals.stats.mean_interval)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from smevals import stats
from smevals.diff.twosample import fisher_exact, unpaired_bootstrap


@pytest.mark.parametrize(("table", "p"), [
    # Fisher's tea: 3/4 against 1/4; the tables as or less likely: x = 3, 1, 4, 0 of 8
    # choose 4: (16 + 16 + 1 + 1) / 70
    ((3, 4, 1, 4), 34 / 70),
    # 4/4 against 4/16: P(x=4) = C(16,4) / C(20,8) = 1820 / 125970 is the least likely
    ((4, 4, 4, 16), 1820 / 125970),
    ((0, 5, 3, 15), None),             # symmetric check below
    ((2, 2, 0, 0), 1.0), ((0, 3, 0, 5), 1.0), ((3, 3, 5, 5), 1.0),
])
def test_fisher_exact(table: tuple[int, int, int, int], p: float | None) -> None:
    got = fisher_exact(*table)
    if p is not None:
        assert got == pytest.approx(p, rel=1e-9)
    passed_a, n_a, passed_b, n_b = table
    assert fisher_exact(passed_b, n_b, passed_a, n_a) == pytest.approx(got, rel=1e-9)


def test_fisher_exact_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError):
        fisher_exact(3, 2, 0, 1)


@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))
def test_fisher_exact_is_a_probability(a: int, na: int, b: int, nb: int) -> None:
    p = fisher_exact(min(a, na), na, min(b, nb), nb)
    assert 0 < p <= 1


def test_unpaired_bootstrap_is_seeded_and_brackets_the_difference() -> None:
    before, after = [1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    ci = unpaired_bootstrap(before, after, iterations=2000, seed=0)
    assert ci == unpaired_bootstrap(before, after, iterations=2000, seed=0)
    assert ci is not None and ci[0] <= -0.75 + 1 / 6 <= ci[1] and ci[0] < ci[1]
    assert unpaired_bootstrap([0.5, 0.5], [0.25]) == (-0.25, -0.25)
    assert unpaired_bootstrap([], [1.0]) is None


@pytest.mark.parametrize(("xs", "interval"), [
    ([], None), ([0.9], None),                                   # no interval over one
    ([0.8, 1.0], (0.8 + 0.1 - stats.Z95 * 0.1, 1.0)),            # clipped at 1
    ([0.0, 0.2], (0.0, 0.1 + stats.Z95 * 0.1)),                  # clipped at 0
    ([0.5, 0.5], (0.5, 0.5)),
])
def test_mean_interval_is_clipped_to_the_scores_range(xs: list[float], interval) -> None:
    got = stats.mean_interval(xs)
    if interval is None:
        assert got is None
    else:
        assert got is not None and got == pytest.approx(interval)
        assert 0 <= got[0] <= got[1] <= 1


@given(st.lists(st.floats(0, 1), min_size=2, max_size=40))
def test_a_mean_interval_never_leaves_0_1(xs: list[float]) -> None:
    low, high = stats.mean_interval(xs) or (math.nan, math.nan)
    assert 0 <= low <= high <= 1
