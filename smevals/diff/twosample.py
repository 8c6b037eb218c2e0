"""Statistics of two independent samples (stdlib only), for the evidence part of a diff
(`smevals.diff.split`): the Runs of A against the Runs of B, both graded by B's grader, are
different Runs, so nothing pairs them.

- Pass/fail: Fisher's exact test on the 2 x 2 table (side x pass/fail), two-sided.
- Scores: a seeded percentile bootstrap of the difference of the two means, each side
  resampled on its own.

The paired tests (McNemar, the paired bootstrap) are in `smevals.stats`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from smevals.stats import quantile, resamples

__all__ = ["fisher_exact", "unpaired_bootstrap"]


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


