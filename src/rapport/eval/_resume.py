"""Where a run on an existing run dir starts again: the sessions it keeps, the memory it
starts each user from, and the error sessions it runs again.

A user's sessions are played in order, each from the memory the one before left, so a retried
error session is played again with every session after it, from the memory version stored
before it: a resumed run then ends as an uninterrupted one would.
"""

from __future__ import annotations

from dataclasses import dataclass

from rapport.log import MemoryVersion
from rapport.store import RunStore

MAX_ATTEMPTS = 3
"""Times an error session is played before a resume keeps it as it is."""


@dataclass
class ResumePlan:
    """Where one user's sessions under one condition resume."""

    done: set[int]
    """Session indices that are kept (not run again)."""
    memory: MemoryVersion | None
    """The memory version to start from (None: a fresh memory)."""
    retried: int = 0
    """Stored error sessions that are run again."""


def plan_resume(
    store: RunStore,
    condition: str,
    user_id: str,
    *,
    retry_errors: bool = True,
    max_attempts: int = MAX_ATTEMPTS,
) -> ResumePlan:
    """Stored sessions are kept; with ``retry_errors``, a user's sessions from the first
    error on that has been played fewer than ``max_attempts`` times (0: no limit) are run
    again, from the memory as it was before that session.
    """
    done = store.done(condition, user_id)
    attempts = store.attempts(condition, user_id, errors=True) if retry_errors else {}
    errors = {key[2]: n for key, n in attempts.items()}
    retryable = [i for i, n in errors.items() if not exhausted(n, max_attempts)]
    if not retryable:
        return ResumePlan(done, store.latest_memory(condition, user_id))
    first = min(retryable)
    memory = store.memory_version(condition, user_id, first) if first > 0 else None
    if first > 0 and memory is None:
        # No snapshot before the first error: start the user over.
        first = 0
    kept = {i for i in done if i < first}
    return ResumePlan(kept, memory, retried=sum(i >= first for i in errors))


def exhausted(attempts: int, max_attempts: int) -> bool:
    """Whether a session played ``attempts`` times has had all it may (0: no limit)."""
    return max_attempts > 0 and attempts >= max_attempts
