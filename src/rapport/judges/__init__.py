"""LLM judges scored on rubrics, and the reliability statistics of several judges."""

from ._judges import (
    Dimension,
    DimensionScore,
    JudgeResult,
    JudgeScore,
    MultiJudge,
    judge_means_from_events,
    verdict_schema,
)
from ._reliability import (
    coefficient_of_variation,
    cronbach_alpha,
    cronbach_alpha_ci,
    f_quantile,
    icc2,
    run_spread,
)

__all__ = [
    "Dimension",
    "DimensionScore",
    "JudgeResult",
    "JudgeScore",
    "MultiJudge",
    "coefficient_of_variation",
    "cronbach_alpha",
    "cronbach_alpha_ci",
    "f_quantile",
    "icc2",
    "judge_means_from_events",
    "run_spread",
    "verdict_schema",
]
