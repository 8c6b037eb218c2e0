"""Statistics of two independent samples (stdlib only), for the evidence part of a diff
(`smevals.diff.split`): the Runs of A against the Runs of B, both graded by B's grader, are
different Runs, so nothing pairs them.

- Pass/fail: Fisher's exact test on the 2 x 2 table (side x pass/fail), two-sided.
- Scores: a seeded percentile bootstrap of the difference of the two means, each side
  resampled on its own; for many Runs (`interval` above BOOTSTRAP_RUNS) the normal interval
  the bootstrap tends to, which costs nothing (a bootstrap of 20,000 Runs took seconds).

The paired tests (McNemar, the paired bootstrap) are in `smevals.stats`.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence

from smevals.stats import mean, paired_bootstrap, quantile, resamples, stderr

__all__ = ["fisher_exact", "paired_interval", "unpaired_bootstrap", "unpaired_interval"]

BOOTSTRAP_RUNS = 1_000      # values one resample draws, up to which an interval is bootstrapped
DRAWS = 500_000             # values one bootstrap draws in all (fewer resamples for more Runs)
ITERATIONS = 2_000          # resamples, at most
SEED = 0


def _iterations(n: int) -> int:
    return max(500, min(ITERATIONS, DRAWS // max(n, 1)))


def _z(level: float) -> float:
    return statistics.NormalDist().inv_cdf(1 - (1 - level) / 2)


def paired_interval(deltas: Sequence[float], level: float = 0.95) -> tuple[float, float] | None:
    """The interval of the mean of paired differences: the paired bootstrap (seeded) up to
    BOOTSTRAP_RUNS differences, the normal interval (mean ± z · standard error) above."""
    if len(deltas) <= BOOTSTRAP_RUNS:
        return paired_bootstrap(deltas, _iterations(len(deltas)), SEED, level)
    m, se = mean(deltas), stderr(deltas)
    assert m is not None and se is not None
    return (m - _z(level) * se, m + _z(level) * se)


def unpaired_interval(before: Sequence[float], after: Sequence[float],
                      level: float = 0.95) -> tuple[float, float] | None:
    """The interval of mean(after) - mean(before): the unpaired bootstrap (seeded) up to
    BOOTSTRAP_RUNS values in all, the normal interval of a difference of two independent
    means above (its standard error sqrt(s_a²/n_a + s_b²/n_b))."""
    if not before or not after:
        return None
    if len(before) + len(after) <= BOOTSTRAP_RUNS or len(before) < 2 or len(after) < 2:
        n = len(before) + len(after)
        return unpaired_bootstrap(before, after, _iterations(n), SEED, level)
    ma, mb = mean(before), mean(after)
    sa, sb = stderr(before), stderr(after)
    assert ma is not None and mb is not None and sa is not None and sb is not None
    half = _z(level) * math.hypot(sa, sb)
    return (mb - ma - half, mb - ma + half)


def unpaired_bootstrap(
    before: Sequence[float], after: Sequence[float], iterations: int = 10_000, seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval for mean(after) - mean(before) of two independent
    samples: each resample draws len(before) values from `before` and len(after) from
    `after`, with replacement, from one `random.Random(seed)` (so the same inputs always
    give the same interval). None when a side is empty; a point when each side's values
    are all equal."""
    if iterations < 1 or not 0 < level < 1:
        raise ValueError(f"need iterations >= 1 and 0 < level < 1, got {iterations}, {level}")
    if not before or not after:
        return None
    if all(x == before[0] for x in before) and all(x == after[0] for x in after):
        return (float(after[0] - before[0]),) * 2
    rng = random.Random(seed)
    na, nb = len(before), len(after)
    diffs = sorted(sum(rng.choices(after, k=nb)) / nb - sum(rng.choices(before, k=na)) / na
                   for _ in range(resamples(na + nb, iterations)))
    tail = (1 - level) / 2
    return (quantile(diffs, tail), quantile(diffs, 1 - tail))


def fisher_exact(passed_a: int, n_a: int, passed_b: int, n_b: int) -> float:
    """Two-sided p-value of Fisher's exact test that two independent samples (passed_a of
    n_a, passed_b of n_b) share one pass rate: the sum of the hypergeometric probabilities
    of every table with the same margins that is no more likely than the one observed
    (within a relative 1e-7, as is usual). 1.0 when a side is empty.

    Raises:
        ValueError: unless 0 <= passed <= n on each side.
    """
    if not (0 <= passed_a <= n_a and 0 <= passed_b <= n_b):
        raise ValueError(f"need 0 <= passed <= n, got {passed_a}/{n_a} and {passed_b}/{n_b}")
    passes, n = passed_a + passed_b, n_a + n_b
    if not n_a or not n_b or passes in (0, n):
        return 1.0

    def log_p(x: int) -> float:          # P(side A has x of the passes), in logs
        return (_log_comb(n_a, x) + _log_comb(n_b, passes - x) - _log_comb(n, passes))

    seen = log_p(passed_a)
    tables = range(max(0, passes - n_b), min(n_a, passes) + 1)
    return min(1.0, sum(math.exp(lp) for lp in map(log_p, tables) if lp <= seen + 1e-7))


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


