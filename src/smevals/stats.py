"""Small, pure statistics for reports and diffs (stdlib only).

Every function here is deterministic and free of I/O, so `report` and `diff` can call
them on plain lists of numbers and booleans. The choices behind each one:

- Spread: `stderr` is the sample standard deviation (n - 1) over sqrt(n), and is never
  given for fewer than two values.
- Pass rates: the Wilson score interval, which stays inside [0, 1] and is sensible at
  0 and n successes, where the normal ("Wald") interval collapses to a point.
- Comparing two revisions on the same tasks: paired statistics. The exact McNemar test
  on the discordant tasks for pass/fail, and a seeded percentile bootstrap of the mean
  of per-task deltas for scores.
- A mean score's interval: mean ± 1.96 standard errors, clipped to the scores' range
  [0, 1] (a score cannot leave it), none for fewer than two scores.
- Repeats: pass@k (at least one of k samples passes), pass^k (all k samples pass), and a
  stable/flaky class per task.

docs/reports.md (Statistics in reports and diffs) describes each statistic as users see it.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import Literal, TypeVar

__all__ = [
    "Z95",
    "RepeatClass",
    "bootstrap_ci",
    "classify_counts",
    "classify_repeats",
    "competition_ranks",
    "discordant_counts",
    "fmt_ci",
    "fmt_mean_se",
    "fmt_p",
    "holm",
    "mcnemar_exact",
    "mean",
    "mean_interval",
    "paired",
    "paired_bootstrap",
    "pass_at_k",
    "pass_hat_k",
    "quantile",
    "significant",
    "stderr",
    "stdev",
    "wilson",
]

Z95 = 1.959963984540054
"""The 97.5th percentile of the standard normal: the z of a two-sided 95% interval."""

RepeatClass = Literal["stable_pass", "stable_fail", "flaky"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


# --- mean and spread -------------------------------------------------------------------


def mean(xs: Sequence[float]) -> float | None:
    """Arithmetic mean of `xs` (bools count as 0/1), or None when `xs` is empty."""
    return statistics.fmean(xs) if xs else None


def stderr(xs: Sequence[float]) -> float | None:
    """Standard error of the mean: sample standard deviation (n - 1) / sqrt(n).

    Returns None when there are fewer than two values: one value says nothing about
    spread, so no stderr is ever reported for it.
    """
    if len(xs) < 2:
        return None
    return stdev(xs) / math.sqrt(len(xs))


def stdev(xs: Sequence[float]) -> float:
    """Sample standard deviation (n - 1), equal to `statistics.stdev` to the last bit.

    Like the standard library, the sum of squares is exact (in fractions) and its square
    root correctly rounded; but equal values are summed once, times their count, so the
    usual report (scores of 0 and 1 from thousands of Runs) costs a handful of fractions.
    """
    values = [float(x) for x in xs]
    tally = Counter(values)
    if len(tally) * 4 > len(values) or not all(map(math.isfinite, tally)):
        return statistics.stdev(values)
    n = len(values)
    parts = [(Fraction(x), c) for x, c in tally.items()]
    mean_ = sum((x * c for x, c in parts), Fraction(0)) / n
    squares = sum((c * (x - mean_) ** 2 for x, c in parts), Fraction(0)) / (n - 1)
    return _sqrt_fraction(squares.numerator, squares.denominator)


def _sqrt_fraction(num: int, den: int) -> float:
    """The square root of num/den (num >= 0, den > 0), correctly rounded to a float: an
    integer root with at least 55 bits, its last bit set when inexact (round to odd),
    then rounded once by float()."""
    if num == 0:
        return 0.0
    shift = max(0, 110 - (num.bit_length() - den.bit_length()))
    shift += shift & 1
    scaled = num << shift
    whole, rest = divmod(scaled, den)
    root = math.isqrt(whole)
    if rest or root * root != whole:
        root |= 1
    return math.ldexp(float(root), -(shift // 2))


def fmt_mean_se(xs: Sequence[float]) -> str:
    """Format `xs` as the report shows scores and numeric metrics.

    `"0.90 ±0.10"` (mean ± stderr, 2 decimals, the "±" glued to the stderr) for two or
    more values, `"0.90"` for one value and `"-"` for none. A zero stderr still shows
    (`"0.60 ±0.00"`), so one value and several equal values read differently.
    """
    m = mean(xs)
    if m is None:
        return "-"
    se = stderr(xs)
    return f"{m:.2f}" if se is None else f"{m:.2f} ±{se:.2f}"


def mean_interval(xs: Sequence[float], low: float = 0.0,
                  high: float = 1.0) -> tuple[float, float] | None:
    """The normal 95% interval of the mean of `xs` (mean ± Z95 standard errors), clipped to
    [low, high], the range the values live in (scores: [0, 1]); None for fewer than two."""
    m, se = mean(xs), stderr(xs)
    if m is None or se is None:
        return None
    return (max(low, m - Z95 * se), min(high, m + Z95 * se))


# --- pass rates ------------------------------------------------------------------------


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a pass rate of `successes` out of `n` (95% by default).

    With p = successes / n the bounds are
    `(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)`.
    0 successes give a lower bound of exactly 0.0 and n successes an upper bound of
    exactly 1.0. With `n == 0` nothing is known and the result is `(0.0, 1.0)`.

    Raises:
        ValueError: unless 0 <= successes <= n and z > 0.
    """
    if not 0 <= successes <= n or z <= 0:
        raise ValueError(f"wilson needs 0 <= successes <= n and z > 0, got {successes}/{n}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / n + z2n / (4 * n)) / (1 + z2n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


# --- paired comparison of two revisions ------------------------------------------------


def paired(before: Mapping[K, V], after: Mapping[K, V]) -> list[tuple[V, V]]:
    """Pair the values of the keys (e.g. tasks) present in both mappings.

    Pairs come in the key order of `before`; keys found on one side only are dropped,
    since a paired statistic needs both halves of a pair.
    """
    return [(value, after[key]) for key, value in before.items() if key in after]


def discordant_counts(pairs: Iterable[tuple[bool, bool]]) -> tuple[int, int]:
    """Count the discordant pairs of (before, after) outcomes.

    Returns `(b, c)`: b = pairs that went pass -> fail (regressions), c = pairs that
    went fail -> pass (fixes). Concordant pairs carry no information for McNemar's test.
    """
    b = c = 0
    for was, now in pairs:
        if was and not now:
            b += 1
        elif now and not was:
            c += 1
    return (b, c)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts `b` and `c`.

    Under "no change" each of the b + c discordant pairs is equally likely to go either
    way, so min(b, c) follows Binomial(b + c, 1/2) and
    `p = min(1, 2 · P(X <= min(b, c)))`. It is 1.0 when b + c == 0. The sum is exact
    integer arithmetic, so large counts lose no precision.

    Raises:
        ValueError: if b or c is negative.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    term = tail = 1  # C(n, 0); each next term is C(n, i + 1) = C(n, i) * (n - i) / (i + 1)
    for i in range(min(b, c)):
        term = term * (n - i) // (i + 1)
        tail += term
    outcomes: int = 2**n            # every way the n pairs can go
    return min(1.0, 2 * tail / outcomes)


def significant(p: float, alpha: float = 0.05) -> bool:
    """True when the p-value `p` is strictly below the significance level `alpha`."""
    return p < alpha


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values, in the order given.

    Use them when one diff tests many things at once (a test per task): comparing each
    adjusted p-value with alpha keeps the chance of any false alarm at or below alpha.
    The i-th smallest of m p-values is multiplied by (m - i), running maxima are taken
    so the order is kept, and results are capped at 1.
    """
    m = len(pvalues)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda j: pvalues[j])):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def bootstrap_ci(
    xs: Sequence[float], iterations: int = 10_000, seed: int = 0, level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile bootstrap interval for the mean of `xs`.

    Draws `iterations` resamples of len(xs) values with replacement from
    `random.Random(seed)`, takes each resample's mean, and returns the
    (1 - level)/2 and (1 + level)/2 quantiles of those means (linearly interpolated
    between order statistics). The same inputs always give the same interval. Returns
    None for an empty `xs`; all-equal values give the point interval (v, v).

    Raises:
        ValueError: unless iterations >= 1 and 0 < level < 1.
    """
    if iterations < 1 or not 0 < level < 1:
        raise ValueError(f"need iterations >= 1 and 0 < level < 1, got {iterations}, {level}")
    if not xs:
        return None
    if all(x == xs[0] for x in xs):
        return (float(xs[0]), float(xs[0]))
    rng = random.Random(seed)
    n = len(xs)
    iterations = resamples(n, iterations)
    means = sorted(sum(rng.choices(xs, k=n)) / n for _ in range(iterations))
    tail = (1 - level) / 2
    return (quantile(means, tail), quantile(means, 1 - tail))


DRAW_BUDGET = 2_000_000
MIN_RESAMPLES = 1_000


def resamples(n: int, iterations: int) -> int:
    """How many resamples to draw for n values: `iterations`, lowered for large n so that
    n x resamples stays within DRAW_BUDGET, but never below MIN_RESAMPLES (or `iterations`)."""
    return min(iterations, max(MIN_RESAMPLES, DRAW_BUDGET // max(n, 1)))


def paired_bootstrap(
    deltas: Sequence[float], iterations: int = 10_000, seed: int = 0, level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile bootstrap interval for the mean of paired deltas (after - before).

    Each delta is one task's score change between two revisions; resampling whole
    tasks keeps each pair together. An interval that excludes 0 is evidence of a real
    change at that level. See `bootstrap_ci` for the method; None for no deltas.
    """
    return bootstrap_ci(deltas, iterations=iterations, seed=seed, level=level)


def quantile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of a sorted, non-empty sequence, interpolating between neighbours."""
    h = (len(ordered) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (h - lo) * (ordered[hi] - ordered[lo])


# --- repeats ---------------------------------------------------------------------------


def _check_k(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from `n` samples of which `c` passed.

    The chance that at least one of k samples drawn without replacement passes:
    `1 - C(n-c, k) / C(n, k)`. The difference is taken in exact integers and divided
    once, so the result is correctly rounded: a float product form
    `1 - prod (1 - k/i)` avoids nothing here (Python integers do not overflow) and
    loses digits to cancellation when pass@k is small (it gives 0.0010000000000000009
    for n=1000, c=1, k=1).

    Raises:
        ValueError: unless 0 <= c <= n and 1 <= k <= n.
    """
    _check_k(n, c, k)
    total = math.comb(n, k)
    return (total - math.comb(n - c, k)) / total


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k from `n` samples of which `c` passed: the chance all k samples pass.

    For k samples drawn without replacement: `C(c, k) / C(n, k)` (0 when c < k),
    computed in exact integers and divided once, so the result is correctly rounded.

    Raises:
        ValueError: unless 0 <= c <= n and 1 <= k <= n.
    """
    _check_k(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def classify_repeats(outcomes: Sequence[bool]) -> RepeatClass:
    """Classify one task's repeated pass/fail outcomes.

    `"stable_pass"` if every outcome passed, `"stable_fail"` if every one failed,
    else `"flaky"`. A single outcome is stable.

    Raises:
        ValueError: for no outcomes, which have no class.
    """
    if not outcomes:
        raise ValueError("classify_repeats needs at least one outcome")
    return classify_counts(len(outcomes), sum(map(bool, outcomes)))


def classify_counts(n: int, passed: int) -> RepeatClass:
    """`classify_repeats` of n outcomes of which `passed` passed (n >= 1)."""
    if passed == n:
        return "stable_pass"
    return "stable_fail" if passed == 0 else "flaky"


# --- ranking and formatting ------------------------------------------------------------


def competition_ranks(values: Sequence[str | float]) -> list[int]:
    """Standard competition ranks ("1224") of an already sorted sequence.

    A value equal to the one before it shares that one's rank; the next different value
    takes its 1-based position. Only neighbours are compared, so rank the displayed
    strings to make ties exactly what a reader sees.
    """
    ranks: list[int] = []
    for i, value in enumerate(values):
        tied = i > 0 and value == values[i - 1]
        ranks.append(ranks[-1] if tied else i + 1)
    return ranks


def fmt_ci(interval: tuple[float, float] | None, digits: int = 2) -> str:
    """Format an interval as `"[0.49, 0.94]"`, or `"-"` when there is none."""
    if interval is None:
        return "-"
    low, high = interval
    return f"[{low:.{digits}f}, {high:.{digits}f}]"


def fmt_p(p: float) -> str:
    """Format a p-value as `"p=0.021"` (3 decimals), or `"p<0.001"` below 0.001."""
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"
