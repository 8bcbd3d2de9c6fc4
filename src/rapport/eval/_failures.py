"""Failure accounting of one invocation: sessions, errors and calls counted as each session
is committed, and the stop when a model provider is down.

A session that failed on a provider (``ModelError``) counts one more in a row; a session that
reached a provider and did not fail on it starts the count again. A session answered wholly
from the response cache tells nothing about the provider and leaves the count as it is, so a
dead server stops a run whose early sessions are cached.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapport.log import ErrorEvent, SessionRecord

MAX_CONSECUTIVE_FAILURES = 10
"""Sessions in a row that may fail on a provider (``ModelError``) before the run stops."""


class ProviderOutage(RuntimeError):
    """The run stopped: too many sessions in a row failed on a model provider.

    Every session committed before stays; running the same command again resumes (and,
    by default, retries the sessions that failed).
    """


@dataclass
class Tally:
    """What this invocation ran so far."""

    sessions_run: int = 0
    errors: int = 0
    model_calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    retried: int = 0
    consecutive_failures: int = 0
    max_failures: int = MAX_CONSECUTIVE_FAILURES

    def counts(self) -> dict[str, int]:
        """What a `RunResult` reports of the tally."""
        return {
            "sessions_run": self.sessions_run,
            "errors": self.errors,
            "model_calls": self.model_calls,
            "cached_calls": self.cached_calls,
            "failed_calls": self.failed_calls,
            "retried": self.retried,
        }

    def count(self, record: SessionRecord) -> None:
        """Count a committed session.

        Raises:
            ProviderOutage: ``max_failures`` sessions in a row failed on a provider.
        """
        self.sessions_run += 1
        self.errors += record.status == "error"
        self.model_calls += sum(not c.cached and c.error is None for c in record.usage)
        self.cached_calls += sum(c.cached and c.error is None for c in record.usage)
        self.failed_calls += sum(c.error is not None for c in record.usage)
        outage = [e for e in record.events_of(ErrorEvent) if e.error_type == "ModelError"]
        if outage:
            self.consecutive_failures += 1
        elif any(not c.cached for c in record.usage):
            self.consecutive_failures = 0
        if self.max_failures and self.consecutive_failures >= self.max_failures:
            raise ProviderOutage(
                f"stopped after {self.consecutive_failures} sessions in a row failed on a "
                f"model provider (last, {outage[-1].where}: {outage[-1].message[:160]}); "
                f"{self.sessions_run} sessions of this invocation are kept; run the same "
                "command again to resume"
            )
