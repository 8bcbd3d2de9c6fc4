"""Deterministic, seeded failure injection: some calls fail on their first attempts."""

from __future__ import annotations

import random
from collections.abc import Sequence

from pydantic import BaseModel, Field

from rapport.llm import stable_hash

TRANSIENT = "the service did not respond (transient failure); nothing was changed, try again"


class FailurePlan(BaseModel):
    """Which methods fail, and on how many of their first attempts."""

    targets: dict[str, int] = Field(default_factory=dict)
    """Method name -> number of leading attempts that fail."""
    message: str = TRANSIENT

    def fails(self, name: str, attempt: int) -> bool:
        """Whether the ``attempt``-th call (1-based) of ``name`` fails."""
        return attempt <= self.targets.get(name, 0)


def plan_failures(
    calls: Sequence[str], *, seed: int, key: str, count: int = 1, attempts: int = 1
) -> FailurePlan:
    """Pick ``count`` distinct method names among the reference calls, the same for a seed.

    Args:
        calls: the reference method names of the task, in order.
        seed: the run seed.
        key: a stable key of the trial (the task id), so tasks differ under one seed.
        count: how many methods fail.
        attempts: how many leading attempts of each fail.
    """
    names = sorted({name for name in calls if name != "cd"})
    if not names:
        return FailurePlan()
    rng = random.Random(int(stable_hash(str(seed), key)[:12], 16))
    chosen = rng.sample(names, k=min(count, len(names)))
    return FailurePlan(targets={name: attempts for name in chosen})
