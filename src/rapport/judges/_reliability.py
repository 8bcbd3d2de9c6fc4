"""Agreement statistics for several judges: ICC(2,1), ICC(2,k), Cronbach's alpha with its
confidence interval, and the spread of one judge over repeated runs (mean std, mean CV).

Matrices are ``targets x raters`` (rows: the sessions scored; columns: the judges) for the
intraclass correlations and ``subjects x items`` for alpha. Pure numpy; rows with a missing
value are dropped (listwise), as agreement needs every rater on every target.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray


def _complete(matrix: ArrayLike) -> NDArray[np.float64]:
    data = np.asarray(matrix, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {data.shape}")
    return data[~np.isnan(data).any(axis=1)]


def _two_way_mean_squares(data: NDArray[np.float64]) -> tuple[float, float, float]:
    """Mean squares of rows (targets), columns (raters) and the residual."""
    n, k = data.shape
    grand = data.mean()
    ss_rows = k * float(((data.mean(axis=1) - grand) ** 2).sum())
    ss_cols = n * float(((data.mean(axis=0) - grand) ** 2).sum())
    ss_total = float(((data - grand) ** 2).sum())
    ss_error = ss_total - ss_rows - ss_cols
    return ss_rows / (n - 1), ss_cols / (k - 1), ss_error / ((n - 1) * (k - 1))


def icc2(matrix: ArrayLike) -> tuple[float, float]:
    """Two-way random effects, absolute agreement: (ICC(2,1), ICC(2,k)).

    ICC(2,1) is the reliability of one judge; ICC(2,k) that of the mean of the k judges
    (Shrout and Fleiss 1979). NaN when there are fewer than two targets or raters, or the
    scores do not vary at all.
    """
    data = _complete(matrix)
    n, k = data.shape
    if n < 2 or k < 2:
        return math.nan, math.nan
    ms_rows, ms_cols, ms_error = _two_way_mean_squares(data)
    single_den = ms_rows + (k - 1) * ms_error + k * (ms_cols - ms_error) / n
    average_den = ms_rows + (ms_cols - ms_error) / n
    single = (ms_rows - ms_error) / single_den if single_den != 0 else math.nan
    average = (ms_rows - ms_error) / average_den if average_den != 0 else math.nan
    return float(single), float(average)


def cronbach_alpha(matrix: ArrayLike) -> float:
    """Cronbach's alpha of the item columns (sample variances, ddof=1)."""
    data = _complete(matrix)
    n, k = data.shape
    if n < 2 or k < 2:
        return math.nan
    total_var = float(data.sum(axis=1).var(ddof=1))
    if total_var == 0:
        return math.nan
    item_var = float(data.var(axis=0, ddof=1).sum())
    return k / (k - 1) * (1 - item_var / total_var)


def coefficient_of_variation(values: Sequence[float]) -> float:
    """Sample standard deviation over the mean (NaN for fewer than two values or mean 0)."""
    data = np.asarray(values, dtype=float)
    data = data[~np.isnan(data)]
    if data.size < 2 or data.mean() == 0:
        return math.nan
    return float(data.std(ddof=1) / abs(data.mean()))


def cronbach_alpha_ci(matrix: ArrayLike, level: float = 0.95) -> tuple[float, float, float]:
    """Cronbach's alpha with Feldt's F-based confidence interval: (alpha, low, high).

    The interval is the one pingouin's ``cronbach_alpha`` reports (Feldt, Woodruff and
    Salih 1987): ``1 - (1 - alpha) * F`` at the F quantiles with ``n - 1`` and
    ``(n - 1)(k - 1)`` degrees of freedom. NaNs where alpha is NaN.
    """
    data = _complete(matrix)
    alpha = cronbach_alpha(data)
    if math.isnan(alpha):
        return math.nan, math.nan, math.nan
    n, k = data.shape
    df1, df2 = n - 1, (n - 1) * (k - 1)
    tail = (1 - level) / 2
    low = 1 - (1 - alpha) * f_quantile(1 - tail, df1, df2)
    high = 1 - (1 - alpha) * f_quantile(tail, df1, df2)
    return alpha, low, high


def run_spread(runs: Sequence[Sequence[float]]) -> tuple[float, float]:
    """(mean std, mean CV) of one judge over repeated runs of the same items.

    Each element of ``runs`` is one item's scores over the runs (an item: one transcript
    on one dimension); the std (ddof=1) and CV of each item are averaged, as the paper's
    Table 5 reports them. NaN when no item has two runs.
    """
    stds, cvs = [], []
    for values in runs:
        data = np.asarray(values, dtype=float)
        data = data[~np.isnan(data)]
        if data.size < 2:
            continue
        stds.append(float(data.std(ddof=1)))
        cvs.append(coefficient_of_variation(data.tolist()))
    clean_cvs = [c for c in cvs if not math.isnan(c)]
    mean_std = sum(stds) / len(stds) if stds else math.nan
    mean_cv = sum(clean_cvs) / len(clean_cvs) if clean_cvs else math.nan
    return mean_std, mean_cv


def f_quantile(p: float, df1: float, df2: float) -> float:
    """The ``p`` quantile of the F distribution (bisection on its CDF)."""
    low, high = 0.0, 1.0
    while _f_cdf(high, df1, df2) < p:
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        if _f_cdf(mid, df1, df2) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def _f_cdf(x: float, df1: float, df2: float) -> float:
    return _beta_regularized(df1 * x / (df1 * x + df2), df1 / 2, df2 / 2) if x > 0 else 0.0


def _beta_regularized(x: float, a: float, b: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front) * _beta_fraction(x, a, b) / a
    return 1 - math.exp(log_front) * _beta_fraction(1 - x, b, a) / b


def _beta_fraction(x: float, a: float, b: float) -> float:
    """Lentz's continued fraction for the incomplete beta function."""
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 10_000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1) < 1e-14:
            break
    return result
