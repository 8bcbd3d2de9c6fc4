"""A finished run's measured model use per session, by condition and role (``--plan --like``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rapport.store import RunStore, StoreError

from ._runner import ExperimentError


@dataclass
class Measured:
    """Calls, prompt and completion tokens per condition and role, and sessions per
    condition, summed over a stored run (every call, cached or not: a fresh run makes
    them all)."""

    sessions: Counter[str] = field(default_factory=Counter)
    calls: Counter[tuple[str, str]] = field(default_factory=Counter)
    prompt_tokens: Counter[tuple[str, str]] = field(default_factory=Counter)
    completion_tokens: Counter[tuple[str, str]] = field(default_factory=Counter)

    def mean(self, condition: str, role: str) -> tuple[float, float, float] | None:
        """Mean calls, prompt and completion tokens of a role per session of a condition
        (zeros where the role made none); None where the run has no such condition."""
        n = self.sessions[condition]
        if not n:
            return None
        key = (condition, role)
        return (
            self.calls[key] / n,
            self.prompt_tokens[key] / n,
            self.completion_tokens[key] / n,
        )


def measure_run(run_dir: Path, benchmark: str) -> Measured:
    """Read a stored run's model use (the store is opened read-only).

    Raises:
        ExperimentError: no run there, or a run of another benchmark.
    """
    try:
        store = RunStore.open_readonly(run_dir)
    except (OSError, StoreError) as exc:
        raise ExperimentError(f"--like {run_dir}: {exc}") from exc
    measured = Measured()
    with store:
        stored = store.run_or_none()
        if stored is None:
            raise ExperimentError(f"--like {run_dir}: no run stored there")
        if stored.benchmark != benchmark:
            raise ExperimentError(
                f"--like {run_dir} is a run of '{stored.benchmark}', not of '{benchmark}'"
            )
        for record in store.iter_sessions():
            measured.sessions[record.condition] += 1
            for call in record.usage:
                key = (record.condition, call.role)
                measured.calls[key] += 1
                measured.prompt_tokens[key] += call.prompt_tokens
                measured.completion_tokens[key] += call.completion_tokens
    return measured
