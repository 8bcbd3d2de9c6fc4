"""The percentile bootstrap every report uses (run summaries, MPT's tables, the gym tables).

It gives the intervals ``scipy.stats.bootstrap(method="percentile")`` gives with a generator
seeded alike (``python benchmarks/bootstrap_scipy.py``: 400 samples of 2-60 values, every
interval equal to within 3e-14, constant samples too). It stays ours because scipy is not a
core dependency (143 MB installed, beside a 199 MB core) and took twice as long per interval
in that script, and because reports bootstrap statistics over rows (MPT's shares), not only
means of numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")

RESAMPLES = 2000
"""Bootstrap resamples unless a caller says otherwise."""
LEVEL = 0.95
"""The confidence level of every interval unless a caller says otherwise."""


def bootstrap_interval(
    values: Sequence[T],
    statistic: Callable[[Sequence[T]], float] | None = None,
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    level: float = LEVEL,
) -> tuple[float, float]:
    """A seeded percentile bootstrap interval of `statistic` over `values` (resampled with
    replacement; default: the mean of numbers).

    The interval contains the statistic of `values` itself; values that are all equal give
    a zero-width interval at the mean; no values give ``(nan, nan)``.
    """
    if not values:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(values), size=(resamples, len(values)))
    tail = (1.0 - level) / 2.0
    if statistic is None:
        data = np.asarray(values, dtype=float)
        if data.min() == data.max():
            return (float(data[0]), float(data[0]))
        point = float(data.mean())
        resampled = data[picks].mean(axis=1)
    else:
        point = statistic(values)
        resampled = np.array([statistic([values[i] for i in pick]) for pick in picks])
    low, high = (float(q) for q in np.quantile(resampled, [tail, 1.0 - tail]))
    if math.isnan(point):
        return (low, high)
    return (min(low, point), max(high, point))
