"""Tests for smevals.stats against values derived by hand (derivations in comments)."""

from __future__ import annotations

import math
import random
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from smevals import stats

# --- mean, stderr, fmt_mean_se ---------------------------------------------------------


@pytest.mark.parametrize(
    ("xs", "expected"),
    [([], None), ([0.9], 0.9), ([1, 2, 3, 4], 2.5), ([True, False, True, True], 0.75)],
)
def test_mean(xs, expected):
    assert stats.mean(xs) == expected


@pytest.mark.parametrize(
    ("xs", "expected"),
    [
        # sample sd of [0.8, 1.0] = sqrt(2 * 0.1**2 / 1) = 0.1414..; / sqrt(2) = 0.1
        ([0.8, 1.0], 0.1),
        # sample sd of [1, 2, 3] = sqrt((1 + 0 + 1) / 2) = 1; / sqrt(3)
        ([1, 2, 3], 1 / math.sqrt(3)),
        ([0.6, 0.6, 0.6], 0.0),
        # bools count as 0/1: [1, 0] has sd sqrt(0.5), / sqrt(2) = 0.5
        ([True, False], 0.5),
    ],
)
def test_stderr_uses_sample_sd_over_sqrt_n(xs, expected):
    assert stats.stderr(xs) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("xs", [[], [0.7]])
def test_stderr_is_none_below_two_values(xs):
    assert stats.stderr(xs) is None


@pytest.mark.parametrize(
    ("xs", "expected"),
    [
        ([0.8, 1.0], "0.90 ±0.10"),
        ([0.9], "0.90"),
        ([], "-"),
        ([0.6, 0.6], "0.60 ±0.00"),
        ([2.0, 4.0], "3.00 ±1.00"),
    ],
)
def test_fmt_mean_se(xs, expected):
    assert stats.fmt_mean_se(xs) == expected


# --- wilson ----------------------------------------------------------------------------
# With z = 1.959963984540054, z² = 3.841458820694124.
# 8/10: z²/n = 0.38415, centre = (0.8 + 0.19207) / 1.38415 = 0.71674,
#       half = z·sqrt(0.016 + 0.0096036) / 1.38415 = 0.22658 -> (0.4902, 0.9433).
# 0/10: both terms reduce to (z²/2n) / (1 + z²/n), so (0, 0.38415 / 1.38415 = 0.27753);
#       10/10 is its mirror image (0.72247, 1).
# 5/10: centre 0.5, half = z·sqrt(0.025 + 0.0096036) / 1.38415 = 0.26340 -> (0.2366, 0.7634).
# 8/10 with z = 1: z²/n = 0.1, centre = 0.85 / 1.1 = 0.772727,
#       half = sqrt(0.016 + 0.0025) / 1.1 = 0.123650 -> (0.649077, 0.896377).


@pytest.mark.parametrize(
    ("successes", "n", "z", "expected"),
    [
        (8, 10, stats.Z95, (0.4902, 0.9433)),
        (0, 10, stats.Z95, (0.0, 0.2775)),
        (10, 10, stats.Z95, (0.7225, 1.0)),
        (5, 10, stats.Z95, (0.2366, 0.7634)),
        (8, 10, 1.0, (0.6491, 0.8964)),
    ],
)
def test_wilson_known_values(successes, n, z, expected):
    low, high = stats.wilson(successes, n, z)
    assert (round(low, 4), round(high, 4)) == expected


def test_wilson_extremes_are_exact():
    assert stats.wilson(0, 10)[0] == 0.0
    assert stats.wilson(10, 10)[1] == 1.0
    assert stats.wilson(0, 1) == (0.0, pytest.approx(stats.Z95**2 / (1 + stats.Z95**2)))


def test_wilson_of_nothing_is_the_whole_range():
    assert stats.wilson(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(("successes", "n", "z"), [(11, 10, 1.96), (-1, 10, 1.96), (1, 2, 0.0)])
def test_wilson_rejects_bad_input(successes, n, z):
    with pytest.raises(ValueError):
        stats.wilson(successes, n, z)


@given(st.integers(1, 2000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_rate_and_mirrors(case):
    successes, n = case
    low, high = stats.wilson(successes, n)
    assert 0.0 <= low <= successes / n <= high <= 1.0
    mirror_low, mirror_high = stats.wilson(n - successes, n)
    assert low == pytest.approx(1 - mirror_high, abs=1e-12)
    assert high == pytest.approx(1 - mirror_low, abs=1e-12)


# --- mcnemar_exact ---------------------------------------------------------------------
# p = min(1, 2 · sum_{i <= min(b, c)} C(b+c, i) / 2^(b+c)):
# b=1, c=9: 2 · (1 + 10) / 1024 = 0.021484375      b=0, c=5: 2 · 1 / 32 = 0.0625
# b=2, c=8: 2 · (1 + 10 + 45) / 1024 = 0.109375     b=0, c=10: 2 / 1024 = 0.001953125
# b=5, c=5: 2 · 638 / 1024 > 1 -> 1.0               b=0, c=1: 2 · 1 / 2 = 1.0


@pytest.mark.parametrize(
    ("b", "c", "expected"),
    [
        (1, 9, 0.021484375),
        (9, 1, 0.021484375),
        (0, 5, 0.0625),
        (2, 8, 0.109375),
        (0, 10, 0.001953125),
        (5, 5, 1.0),
        (0, 1, 1.0),
        (0, 0, 1.0),
    ],
)
def test_mcnemar_exact_known_values(b, c, expected):
    assert stats.mcnemar_exact(b, c) == expected


def test_mcnemar_exact_large_counts_match_normal_approximation():
    # Continuity-corrected normal approximation: z = (|b - c| - 1) / sqrt(b + c)
    # = 399 / 141.42 = 2.8214, two-sided p = erfc(z / sqrt 2) = 0.00478.
    p = stats.mcnemar_exact(9800, 10200)
    assert p == pytest.approx(math.erfc(399 / math.sqrt(20000) / math.sqrt(2)), rel=0.02)


@given(st.integers(0, 60), st.integers(0, 60))
def test_mcnemar_exact_matches_the_binomial_sum(b, c):
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    assert stats.mcnemar_exact(b, c) == min(1.0, 2 * tail / 2**n)


def test_mcnemar_exact_rejects_negative_counts():
    with pytest.raises(ValueError):
        stats.mcnemar_exact(-1, 3)


def test_discordant_counts_and_pairing():
    before = {"a": True, "b": True, "c": False, "d": True, "e": False, "gone": True}
    after = {"e": False, "d": True, "c": True, "b": False, "a": False, "new": False}
    pairs = stats.paired(before, after)
    assert pairs == [(True, False), (True, False), (False, True), (True, True), (False, False)]
    assert stats.discordant_counts(pairs) == (2, 1)


@pytest.mark.parametrize(
    ("p", "alpha", "expected"),
    [(0.049, 0.05, True), (0.05, 0.05, False), (0.2, 0.05, False), (0.02, 0.01, False)],
)
def test_significant_is_strictly_below_alpha(p, alpha, expected):
    assert stats.significant(p, alpha) is expected


@pytest.mark.parametrize(
    ("ps", "expected"),
    [
        # sorted: 0.01·3 = 0.03; 0.03·2 = 0.06; 0.04·1 = 0.04 -> running max 0.06
        ([0.01, 0.04, 0.03], [0.03, 0.06, 0.06]),
        ([0.5, 0.6], [1.0, 1.0]),
        ([0.02], [0.02]),
        ([], []),
    ],
)
def test_holm(ps, expected):
    assert stats.holm(ps) == pytest.approx(expected)


# --- bootstrap -------------------------------------------------------------------------


def _normal_deltas(n: int = 1000) -> list[float]:
    rng = random.Random(42)
    return [rng.gauss(0.1, 1.0) for _ in range(n)]


def test_paired_bootstrap_is_deterministic_per_seed():
    deltas = _normal_deltas(200)
    first = stats.paired_bootstrap(deltas, iterations=2000, seed=7)
    assert first == stats.paired_bootstrap(deltas, iterations=2000, seed=7)
    assert first != stats.paired_bootstrap(deltas, iterations=2000, seed=8)


def test_paired_bootstrap_contains_the_mean_with_the_expected_width():
    deltas = _normal_deltas()
    interval = stats.paired_bootstrap(deltas)
    assert interval is not None
    low, high = interval
    assert low < math.fsum(deltas) / len(deltas) < high
    # A 95% interval for a mean of 1000 values is about ±1.96·sd/sqrt(n) wide.
    se = stats.stderr(deltas)
    assert se is not None
    expected_width = 2 * stats.Z95 * se
    assert high - low == pytest.approx(expected_width, rel=0.1)


@pytest.mark.parametrize(
    ("deltas", "expected"),
    [
        # Resample means of [0, 1] are 0, 0.5, 1 with chance 1/4, 1/2, 1/4: both 2.5% tails
        # fall inside the 25% masses at the ends.
        ([0.0, 1.0], (0.0, 1.0)),
        # [0, 0, 0, 1]: mean = X/4 with X ~ Bin(4, 1/4); P(X=0) = 0.316 covers the low tail,
        # P(X <= 2) = 0.949 < 0.975 < P(X <= 3) = 0.996, so the top is 3/4.
        ([0.0, 0.0, 0.0, 1.0], (0.0, 0.75)),
        ([0.1] * 50, (0.1, 0.1)),
        ([-0.25], (-0.25, -0.25)),
    ],
)
def test_paired_bootstrap_known_intervals(deltas, expected):
    assert stats.paired_bootstrap(deltas) == expected


def test_paired_bootstrap_of_nothing_is_none():
    assert stats.paired_bootstrap([]) is None


def test_bootstrap_wider_level_gives_wider_interval():
    deltas = _normal_deltas(100)
    narrow = stats.bootstrap_ci(deltas, iterations=2000, level=0.8)
    wide = stats.bootstrap_ci(deltas, iterations=2000, level=0.99)
    assert narrow is not None and wide is not None
    assert wide[0] < narrow[0] < narrow[1] < wide[1]


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=50), st.sampled_from([4, 10, 40]))
def test_bootstrap_quantiles_interpolate_like_statistics_inclusive(xs, n):
    # statistics.quantiles(method="inclusive") interpolates between order statistics the
    # same way, so it is an independent reference for the cut points i/n.
    expected = statistics.quantiles(xs, n=n, method="inclusive")
    ordered = sorted(xs)
    got = [stats.quantile(ordered, i / n) for i in range(1, n)]
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-6)


@pytest.mark.parametrize(("iterations", "level"), [(0, 0.95), (100, 1.0), (100, 0.0)])
def test_bootstrap_rejects_bad_parameters(iterations, level):
    with pytest.raises(ValueError):
        stats.bootstrap_ci([1.0, 2.0], iterations=iterations, level=level)


# --- pass@k and pass^k -----------------------------------------------------------------
# pass@k = 1 - C(n-c, k)/C(n, k); pass^k = C(c, k)/C(n, k) (C(a, k) = 0 when a < k).
# n=10, c=3, k=2: 1 - C(7,2)/C(10,2) = 1 - 21/45 = 24/45.
# n=10, c=5, k=3: 1 - C(5,3)/C(10,3) = 1 - 10/120 = 11/12.
# n=5, c=1, k=5: all five samples are drawn, so the one pass is always among them -> 1.
# n=5, c=4, k=2: C(4,2)/C(5,2) = 6/10.   n=10, c=7, k=3: C(7,3)/C(10,3) = 35/120.


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (10, 3, 1, 0.3),
        (10, 3, 2, 24 / 45),
        (10, 5, 3, 11 / 12),
        (5, 0, 1, 0.0),
        (5, 0, 5, 0.0),
        (5, 5, 1, 1.0),
        (5, 5, 5, 1.0),
        (5, 1, 5, 1.0),
        (1, 1, 1, 1.0),
    ],
)
def test_pass_at_k_known_values(n, c, k, expected):
    assert stats.pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 4, 2, 0.6),
        (10, 7, 3, 35 / 120),
        (10, 3, 1, 0.3),
        (5, 4, 5, 0.0),
        (5, 5, 5, 1.0),
        (5, 0, 1, 0.0),
        (5, 1, 2, 0.0),
    ],
)
def test_pass_hat_k_known_values(n, c, k, expected):
    assert stats.pass_hat_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_k_are_correctly_rounded_when_small():
    # Exactly 1/1000 and 1/C(1000, 3) = 1/166167000; a float product form would give
    # 0.0010000000000000009 for the first.
    assert stats.pass_at_k(1000, 1, 1) == 0.001
    assert stats.pass_hat_k(1000, 3, 3) == 1 / 166_167_000


@pytest.mark.parametrize("fn", [stats.pass_at_k, stats.pass_hat_k])
@pytest.mark.parametrize(("n", "c", "k"), [(5, 2, 0), (5, 2, 6), (5, 6, 1), (5, -1, 1), (0, 0, 1)])
def test_pass_k_rejects_bad_input(fn, n, c, k):
    with pytest.raises(ValueError):
        fn(n, c, k)


@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))), st.data())
def test_pass_k_match_binomial_ratios(nc, data):
    n, c = nc
    k = data.draw(st.integers(1, n))
    assert stats.pass_at_k(n, c, k) == pytest.approx(
        1 - math.comb(n - c, k) / math.comb(n, k), abs=1e-9
    )
    assert stats.pass_hat_k(n, c, k) == pytest.approx(math.comb(c, k) / math.comb(n, k), abs=1e-9)
    assert stats.pass_hat_k(n, c, k) <= c / n <= stats.pass_at_k(n, c, k)


# --- repeats, ranks, formatting --------------------------------------------------------


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ([True], "stable_pass"),
        ([False], "stable_fail"),
        ([True, True, True], "stable_pass"),
        ([False, False], "stable_fail"),
        ([True, False], "flaky"),
        ([False, False, True], "flaky"),
    ],
)
def test_classify_repeats(outcomes, expected):
    assert stats.classify_repeats(outcomes) == expected


def test_classify_repeats_needs_an_outcome():
    with pytest.raises(ValueError):
        stats.classify_repeats([])


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["0.90 ±0.10", "0.60", "0.60", "0.50"], [1, 2, 2, 4]),
        (["0.60", "0.60 ±0.00"], [1, 2]),
        ([3.0, 2.0, 1.0], [1, 2, 3]),
        ([0.5, 0.5, 0.5], [1, 1, 1]),
        ([1.0, 0.5, 0.5, 0.5, 0.2, 0.2], [1, 2, 2, 2, 5, 5]),
        (["a", "b", "a"], [1, 2, 3]),
        ([], []),
    ],
)
def test_competition_ranks(values, expected):
    assert stats.competition_ranks(values) == expected


@pytest.mark.parametrize(
    ("interval", "digits", "expected"),
    [
        ((0.49016, 0.94331), 2, "[0.49, 0.94]"),
        ((-0.0761, 0.0484), 3, "[-0.076, 0.048]"),
        (None, 2, "-"),
    ],
)
def test_fmt_ci(interval, digits, expected):
    assert stats.fmt_ci(interval, digits) == expected


@pytest.mark.parametrize(
    ("p", "expected"),
    [(0.021484375, "p=0.021"), (1.0, "p=1.000"), (0.001, "p=0.001"), (0.0009, "p<0.001")],
)
def test_fmt_p(p, expected):
    assert stats.fmt_p(p) == expected


@given(st.lists(st.sampled_from([0.0, 1.0, 0.25, 0.5, 1 / 3, 0.1, 7e-300, 3e10, -2.5]),
                min_size=2, max_size=80)
       | st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=12))
def test_stdev_equals_the_standard_library_to_the_last_bit(xs):
    assert stats.stdev(xs) == statistics.stdev(xs)


def test_stdev_of_many_repeated_values_takes_the_counting_path():
    xs = [1.0] * 6000 + [0.25] * 4000
    assert stats.stdev(xs) == statistics.stdev(xs)
    assert stats.stderr(xs) == statistics.stdev(xs) / 100


@pytest.mark.parametrize(("n", "passed", "expected"), [
    (1, 1, "stable_pass"), (1, 0, "stable_fail"), (3, 3, "stable_pass"), (3, 0, "stable_fail"),
    (3, 1, "flaky")])
def test_classify_counts_agrees_with_classify_repeats(n, passed, expected):
    assert stats.classify_counts(n, passed) == expected
    assert stats.classify_repeats([True] * passed + [False] * (n - passed)) == expected
