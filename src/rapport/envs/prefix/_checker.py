"""Tool-use accuracy with bfcl-eval's own state and response checks, on our executor."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ._executor import SafeExecutor
from ._tasks import INSTALL_HINT, BfclTask


class Accuracy(BaseModel):
    """How a trial's executed calls compare with the reference calls."""

    accuracy: float
    """Reference calls whose response the agent's calls also produced, over reference calls."""
    state_match: bool
    """Every backend ended in the reference state (bfcl's state check)."""
    matched: int
    reference: int
    missing: list[str] = Field(default_factory=list)
    """Reference responses the agent never produced."""

    @property
    def success(self) -> bool:
        """bfcl's verdict: the state matches and every reference response was produced."""
        return self.state_match and not self.missing


def _bfcl_checks() -> tuple[Any, Any]:
    try:
        from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(INSTALL_HINT) from exc
    return multi_turn_checker.state_checker, multi_turn_checker.response_checker


def replay_reference(task: BfclTask) -> SafeExecutor:
    """Fresh instances with the task's reference calls run on them (no failures)."""
    executor = SafeExecutor(task, track_writes=False)
    for call in task.reference_calls:
        executor.run(call)
    return executor


def check_accuracy(
    task: BfclTask, trial: SafeExecutor, reference: SafeExecutor | None = None
) -> Accuracy:
    """Score a trial: bfcl's state check on the final instances, then its unordered
    subset check of the reference responses within the trial's responses."""
    state_checker, response_checker = _bfcl_checks()
    reference = reference or replay_reference(task)
    state = state_checker(trial.instances, reference.instances)
    expected = reference.results
    response = response_checker(trial.results, expected, len(task.ground_truth) - 1)
    missing = [] if response["valid"] else list(response["details"]["missing_items"])
    total = len(expected)
    matched = total - len(missing)
    return Accuracy(
        accuracy=matched / total if total else 1.0,
        state_match=bool(state["valid"]),
        matched=matched,
        reference=total,
        missing=[str(m)[:200] for m in missing],
    )
