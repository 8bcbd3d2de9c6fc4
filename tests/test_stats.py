"""The one percentile bootstrap behind every interval a report prints."""

from __future__ import annotations

import math
from collections.abc import Sequence

from rapport._stats import bootstrap_interval
from rapport.envs.mpt import summarize
from rapport.eval import bootstrap_ci


def _share(rows: Sequence[dict[str, float]]) -> float:
    return sum(r["p_em"] for r in rows) / len(rows)


def test_a_statistic_over_rows_brackets_its_value_and_collapses_when_constant() -> None:
    rows = [{"p_em": float(i % 2)} for i in range(40)]
    low, high = bootstrap_interval(rows, _share)
    assert low < 0.5 < high
    assert bootstrap_interval([{"p_em": 1.0}] * 5, _share) == (1.0, 1.0)
    assert all(math.isnan(x) for x in bootstrap_interval([], _share))


def test_the_mean_of_numbers_and_the_mean_as_a_statistic_give_one_interval() -> None:
    values = [0.1, 0.9, 0.4, 0.7, 0.3, 0.8]
    rows = [{"p_em": v} for v in values]
    numbers = bootstrap_interval(values, seed=5)
    as_rows = bootstrap_interval(rows, _share, seed=5)
    assert all(math.isclose(a, b, abs_tol=1e-12) for a, b in zip(numbers, as_rows, strict=True))
    estimate = bootstrap_ci(values, seed=5)
    assert (estimate.ci_low, estimate.ci_high) == numbers


def test_the_interval_always_holds_the_point_estimate() -> None:
    # A skewed sample whose mean sits near an end of the resampled means.
    values = [0.0] * 9 + [1.0]
    low, high = bootstrap_interval(values, resamples=50, seed=1)
    assert low <= 0.1 <= high


def test_mpt_tables_use_the_shared_bootstrap() -> None:
    rows = [{"p_em": float(i % 3 == 0)} for i in range(12)]
    summary = summarize(rows, resamples=300)
    assert summary["p_em_ci"] == bootstrap_interval(
        rows, lambda r: sum(x["p_em"] for x in r) / len(r), resamples=300
    )


def test_the_mean_interval_is_scipys_percentile_interval() -> None:
    """The same intervals as scipy's percentile bootstrap with a generator seeded alike
    (benchmarks/bootstrap_scipy.py measures it on 400 samples)."""
    import numpy as np
    import pytest

    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(11)
    for size in (2, 5, 17, 60):
        values = list(rng.random(size))
        theirs = stats.bootstrap(
            (np.asarray(values),),
            np.mean,
            n_resamples=2000,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(size),
        ).confidence_interval
        low, high = bootstrap_interval(values, seed=size)
        assert math.isclose(low, theirs.low, abs_tol=1e-12)
        assert math.isclose(high, theirs.high, abs_tol=1e-12)
