"""Our agreement statistics against pingouin's on fixed matrices."""

from __future__ import annotations

import math

import numpy as np
import pingouin as pg
import pytest

from rapport.judges import (
    coefficient_of_variation,
    cronbach_alpha,
    cronbach_alpha_ci,
    f_quantile,
    icc2,
    run_spread,
)

pd = pytest.importorskip("pandas")

MATRICES = [
    np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]),
    np.array([[4, 5], [3, 3], [5, 4], [2, 2], [1, 2], [4, 4], [5, 5]]),
    np.random.default_rng(7).integers(1, 6, size=(20, 3)),
]


def _long(matrix: np.ndarray) -> pd.DataFrame:
    rows = [
        {"target": i, "rater": j, "score": float(matrix[i, j])}
        for i in range(matrix.shape[0])
        for j in range(matrix.shape[1])
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("matrix", MATRICES)
def test_icc_matches_pingouin(matrix: np.ndarray) -> None:
    table = pg.intraclass_corr(_long(matrix), targets="target", raters="rater", ratings="score")
    expected = table.set_index("Type")["ICC"]
    # pingouin < 0.7 names them ICC2 / ICC2k; 0.7 names them ICC(A,1) / ICC(A,k).
    one = expected["ICC2"] if "ICC2" in expected else expected["ICC(A,1)"]
    k = expected["ICC2k"] if "ICC2k" in expected else expected["ICC(A,k)"]
    single, average = icc2(matrix)
    assert single == pytest.approx(one, abs=1e-6)
    assert average == pytest.approx(k, abs=1e-6)


@pytest.mark.parametrize("matrix", MATRICES)
def test_alpha_matches_pingouin(matrix: np.ndarray) -> None:
    expected, _ci = pg.cronbach_alpha(data=pd.DataFrame(matrix.astype(float)))
    assert cronbach_alpha(matrix) == pytest.approx(expected, abs=1e-6)


def test_perfect_agreement_gives_icc_one() -> None:
    scores = np.array([[1, 1], [3, 3], [5, 5], [2, 2]])
    single, average = icc2(scores)
    assert single == pytest.approx(1.0)
    assert average == pytest.approx(1.0)


def test_rows_with_missing_scores_are_dropped() -> None:
    full = MATRICES[0].astype(float)
    with_gap = np.vstack([full, [np.nan, 1, 2, 3]])
    assert icc2(with_gap) == pytest.approx(icc2(full))


def test_cv_is_nan_for_a_single_value_and_zero_for_constant_repeats() -> None:
    assert math.isnan(coefficient_of_variation([3.0]))
    assert coefficient_of_variation([4.0, 4.0, 4.0]) == 0.0
    assert coefficient_of_variation([2.0, 4.0]) == pytest.approx(np.std([2, 4], ddof=1) / 3)


def test_alpha_on_a_hand_computed_matrix() -> None:
    # item variances 1 and 21/9, total variance 57/9: alpha = 2 * (1 - 30/57) = 54/57
    alpha, low, high = cronbach_alpha_ci([[1, 2], [2, 3], [3, 5]])
    assert alpha == pytest.approx(54 / 57)
    assert low < alpha < high <= 1.0


@pytest.mark.parametrize("matrix", MATRICES)
def test_alpha_interval_matches_pingouin(matrix: np.ndarray) -> None:
    expected, (low, high) = pg.cronbach_alpha(data=pd.DataFrame(matrix.astype(float)))
    alpha, mine_low, mine_high = cronbach_alpha_ci(matrix)
    assert alpha == pytest.approx(expected, abs=1e-6)
    assert (round(mine_low, 3), round(mine_high, 3)) == (low, high)  # pingouin rounds to 3


@pytest.mark.parametrize(
    ("p", "df1", "df2", "expected"),
    [(0.975, 5, 35, 2.9556580935), (0.025, 5, 35, 0.1613594088), (0.5, 1, 1, 1.0)],
)
def test_f_quantiles_match_tabled_values(p: float, df1: int, df2: int, expected: float) -> None:
    assert f_quantile(p, df1, df2) == pytest.approx(expected, abs=1e-8)


def test_run_spread_is_the_mean_std_and_mean_cv_over_items() -> None:
    # item 1: constant (std 0, CV 0); item 2: 2 and 4 (std sqrt 2, CV sqrt(2)/3)
    std, cv = run_spread([[3.0, 3.0, 3.0], [2.0, 4.0], [5.0]])
    assert std == pytest.approx(math.sqrt(2) / 2)
    assert cv == pytest.approx(math.sqrt(2) / 6)
    assert all(math.isnan(v) for v in run_spread([[1.0]]))
