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
from ._reliability import coefficient_of_variation, cronbach_alpha, icc2

__all__ = [
    "Dimension",
    "DimensionScore",
    "JudgeResult",
    "JudgeScore",
    "MultiJudge",
    "coefficient_of_variation",
    "cronbach_alpha",
    "icc2",
    "judge_means_from_events",
    "verdict_schema",
]
