"""What one session can cost: the most model calls and tokens per role its protocol allows.

A benchmark declares it through `Benchmark.session_caps` (from its caps: turns, a judge per
session, the completion-token limit of each call), and ``rapport run --plan`` multiplies it
out over a run before any model is built.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RoleCap:
    """The most one role can be asked in one session.

    Args:
        calls: model calls at most (the protocol's caps; retries of invalid outputs aside).
        max_tokens: completion tokens at most per call (None: the protocol sets no limit).
    """

    calls: int
    max_tokens: int | None = None

    @property
    def completion_tokens(self) -> int | None:
        """Completion tokens at most in the session (None: no per-call limit)."""
        return None if self.max_tokens is None else self.calls * self.max_tokens


@dataclass(frozen=True)
class SessionCaps:
    """One session's caps, per model role (roles it never calls are absent).

    Args:
        roles: role -> its cap (``judge`` for the benchmark's judge calls).
        dataset: the dataset or task family the session draws from ("" where the
            benchmark has one), for the plan's count of sessions per dataset.
    """

    roles: dict[str, RoleCap] = field(default_factory=dict)
    dataset: str = ""
