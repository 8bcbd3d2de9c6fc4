"""Our agreement statistics against pingouin's on fixed matrices."""

from __future__ import annotations

import math

import numpy as np
import pingouin as pg
import pytest

from rapport.judges import coefficient_of_variation, cronbach_alpha, icc2

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
