"""The experiment runner: the session orchestrator, the runner and metrics."""

from rapport.log import ExperimentConfig

from ._failures import MAX_CONSECUTIVE_FAILURES, ProviderOutage
from ._lifecycle import UserTrack, live_session, play_session
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
from ._orchestrator import MAX_AGENT_CALLS, Orchestrator, guarded, one_line, record_failure
from ._plan import ConditionPlan, RoleEstimate, RunPlan, plan_experiment
from ._prepare import model_roles, prepare_experiment, run, run_experiment
from ._provenance import (
    describe_invocation,
    describe_models,
    git_revision,
    package_versions,
    redact_url,
)
from ._resume import MAX_ATTEMPTS
from ._runner import Experiment, ExperimentError, RunResult

__all__ = [
    "MAX_AGENT_CALLS",
    "MAX_ATTEMPTS",
    "MAX_CONSECUTIVE_FAILURES",
    "ConditionPlan",
    "DeltaPoint",
    "Estimate",
    "Experiment",
    "ExperimentConfig",
    "ExperimentError",
    "Orchestrator",
    "ProviderOutage",
    "RoleEstimate",
    "RunPlan",
    "RunResult",
    "UserTrack",
    "bootstrap_ci",
    "by_condition",
    "condition_metrics",
    "describe_invocation",
    "describe_models",
    "error_counts",
    "eval_sessions",
    "git_revision",
    "guarded",
    "live_session",
    "metric_names",
    "model_roles",
    "one_line",
    "package_versions",
    "per_user_means",
    "pick_baseline",
    "plan_experiment",
    "play_session",
    "prepare_experiment",
    "record_failure",
    "redact_url",
    "run",
    "run_experiment",
    "session_deltas",
    "summarize",
]
