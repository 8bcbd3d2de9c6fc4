"""PRefine: one compact, schema-agnostic memory of abstract preference hypotheses per user,
refined after each session by a generate -> verify -> refine loop."""

from ._loop import (
    Hypothesis,
    HypothesisSet,
    RefineRound,
    Verdict,
    VerdictSet,
    refine,
)
from ._memory import PRefineMemory

__all__ = [
    "Hypothesis",
    "HypothesisSet",
    "PRefineMemory",
    "RefineRound",
    "Verdict",
    "VerdictSet",
    "refine",
]
