"""The experiment runner, metrics and (beside them) judges and reliability statistics."""

from rapport.log import ExperimentConfig

from ._judges import (
    Dimension,
    DimensionScore,
    JudgeResult,
    JudgeScore,
    MultiJudge,
    judge_means_from_events,
    mean_or_nan,
    verdict_schema,
)
from ._metrics import (
    DeltaPoint,
    Estimate,
    bootstrap_ci,
    by_condition,
    condition_metrics,
    error_counts,
    eval_sessions,
    metric_names,
    per_user_means,
    pick_baseline,
    session_deltas,
    summarize,
)
from ._reliability import coefficient_of_variation, cronbach_alpha, icc2
from ._runner import (
    Experiment,
    ExperimentError,
    RunResult,
    one_line,
    prepare_experiment,
    run,
    run_experiment,
)
from ._scripted import ScriptedBenchmark, ScriptedOptions

__all__ = [
    "DeltaPoint",
    "Dimension",
    "DimensionScore",
    "Estimate",
    "Experiment",
    "ExperimentConfig",
    "ExperimentError",
    "JudgeResult",
    "JudgeScore",
    "MultiJudge",
    "RunResult",
    "ScriptedBenchmark",
    "ScriptedOptions",
    "bootstrap_ci",
    "by_condition",
    "coefficient_of_variation",
    "condition_metrics",
    "cronbach_alpha",
    "error_counts",
    "eval_sessions",
    "icc2",
    "judge_means_from_events",
    "mean_or_nan",
    "metric_names",
    "one_line",
    "per_user_means",
    "pick_baseline",
    "prepare_experiment",
    "run",
    "run_experiment",
    "session_deltas",
    "summarize",
    "verdict_schema",
]
