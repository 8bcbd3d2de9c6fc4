"""rapport's percentile bootstrap (`rapport._stats.bootstrap_interval`) beside scipy's
(`scipy.stats.bootstrap(method="percentile")`) on the samples reports bootstrap: per-user
means of 2 to 60 users (scores in [0, 1], 1-5 ratings, 0/1 successes, counts; some constant).
Both get 2000 resamples, level 0.95 and a generator seeded alike. Prints one JSON object:
how often the intervals are equal, how far apart they are otherwise, what each does with
constant samples and with a mean outside its resampled interval, and the time per interval.

    python benchmarks/bootstrap_scipy.py [--samples 400] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import math
import time
import warnings
from collections.abc import Callable

import numpy as np
from scipy import stats

from rapport._stats import LEVEL, RESAMPLES, bootstrap_interval

Interval = tuple[float, float]


def samples(n: int, seed: int) -> list[list[float]]:
    """`n` samples of the kinds a report bootstraps."""
    rng = np.random.default_rng(seed)
    kinds: list[Callable[[int], np.ndarray]] = [
        lambda k: rng.random(k),
        lambda k: rng.integers(1, 6, k).astype(float),
        lambda k: rng.integers(0, 2, k).astype(float),
        lambda k: rng.poisson(3, k).astype(float),
        lambda k: np.full(k, 0.5),
        lambda k: np.r_[np.zeros(k - 1), 1.0],
    ]
    return [list(kinds[i % len(kinds)](int(rng.integers(2, 61)))) for i in range(n)]


def ours(values: list[float], seed: int) -> Interval:
    return bootstrap_interval(values, seed=seed)


def scipy_percentile(values: list[float], seed: int) -> Interval:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning on constant samples
        result = stats.bootstrap(
            (np.asarray(values),),
            np.mean,
            n_resamples=RESAMPLES,
            confidence_level=LEVEL,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(seed),
        )
    ci = result.confidence_interval
    return (float(ci.low), float(ci.high))


def timed(fn: Callable[[list[float], int], Interval], data: list[list[float]]) -> tuple:
    start = time.perf_counter()
    out = [fn(v, i) for i, v in enumerate(data)]
    return out, (time.perf_counter() - start) / len(data) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data = samples(args.samples, args.seed)
    a, ours_us = timed(ours, data)
    b, scipy_us = timed(scipy_percentile, data)
    constant = [i for i, v in enumerate(data) if min(v) == max(v)]
    varied = [i for i in range(len(data)) if i not in constant]
    gaps = [max(abs(a[i][0] - b[i][0]), abs(a[i][1] - b[i][1])) for i in varied]
    outside = [i for i in varied if not b[i][0] <= float(np.mean(data[i])) <= b[i][1]]
    print(
        json.dumps(
            {
                "samples": len(data),
                "resamples": RESAMPLES,
                "varied_samples": len(varied),
                "equal_intervals": sum(g <= 1e-12 for g in gaps),
                "max_endpoint_gap": max(gaps),
                "median_endpoint_gap": float(np.median(gaps)),
                "constant_samples": len(constant),
                "constant_ours": sorted({str(a[i]) for i in constant})[:3],
                "constant_scipy_nan": sum(math.isnan(b[i][0]) for i in constant),
                "scipy_interval_without_the_mean": len(outside),
                "us_per_interval": {"ours": round(ours_us, 1), "scipy": round(scipy_us, 1)},
                "scipy": stats.__name__ and __import__("scipy").__version__,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
