"""Lockstep between a run's concurrent sessions and the batched engine, for repeatable batches.

Which calls share a decoding step decides the floats each one sees where llama.cpp's kernels
are not batch-invariant. If the engine batched whatever had arrived, that would depend on
thread timing, and the same command could give different text. Instead, the runner declares
its concurrent workers as *participants*: the engine admits calls and decodes a step only when
no participant is running Python (each is either waiting on a call or finished), and admits
waiting calls in the order of their keys (the job's position in the run). A session whose call
finished at step t then always joins at step t + 1, whatever the machine's speed.

Calls from outside a participant (scripts, tests, benchmarks) do not wait for anyone.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import threading
from collections.abc import Iterator

log = logging.getLogger(__name__)

_KEY: contextvars.ContextVar[int | None] = contextvars.ContextVar("rapport_lockstep", default=None)


class Lockstep:
    """Counts participants running Python (not waiting on an engine)."""

    def __init__(self, *, patience_s: float = 120.0) -> None:
        self.patience_s = patience_s
        self.running = 0
        self._cond = threading.Condition()

    @contextlib.contextmanager
    def participant(self) -> Iterator[None]:
        """A worker that will make engine calls (the runner's per-user loop)."""
        with self._cond:
            self.running += 1
        try:
            yield
        finally:
            with self._cond:
                self.running -= 1
                self._cond.notify_all()

    def waiting(self) -> None:
        """A participant submitted a call and waits for it."""
        with self._cond:
            self.running -= 1
            self._cond.notify_all()

    def resumed(self) -> None:
        """A participant's call finished (counted before its future resolves)."""
        with self._cond:
            self.running += 1

    def wait_quiet(self) -> None:
        """Block until no participant runs Python (or `patience_s` passed: then go on)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self.running <= 0, timeout=self.patience_s):
                log.warning(
                    "a session ran %ss without calling the engine; batching goes on without "
                    "it (batches of this run may not repeat exactly)",
                    self.patience_s,
                )


LOCKSTEP = Lockstep()
"""The process-wide lockstep (one run at a time per process)."""


@contextlib.contextmanager
def participant() -> Iterator[None]:
    """Declare the current task a participant of `LOCKSTEP` for the block."""
    with LOCKSTEP.participant():
        yield


@contextlib.contextmanager
def call_key(key: int) -> Iterator[None]:
    """Order this task's engine calls by `key` among calls waiting together."""
    token = _KEY.set(key)
    try:
        yield
    finally:
        _KEY.reset(token)


def current_key() -> int | None:
    """The key of the current task, or None outside a participant."""
    return _KEY.get()
